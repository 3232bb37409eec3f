"""Shadow verdicts and reviewer agreement: what a family in shadow mode would have changed,
and how often reviewers agree with the counted verdicts (reads only).

``shadow_report(runs)`` compares, per run and over all of them: the counted verdict, the
verdict had the shadow families counted (``Claim.shadow_status``, empty when no family was
in shadow), and the reviewers' final decisions. A reviewer *agrees* with PASS by approving
it (not as an override) and with FAIL by rejecting it; approving a FAIL, UNCERTAIN or
UNVERIFIABLE claim is an override (a disagreement, with a written reason); UNCERTAIN and
UNVERIFIABLE make no call, so a rejection of them is counted apart, not as agreement.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ledger.models import Claim, ReviewState, Verdict
from research.models import Run
from review.models import Action

VERDICTS = [Verdict.PASS, Verdict.FAIL, Verdict.UNCERTAIN, Verdict.UNVERIFIABLE]
DECISIONS = ["approved", "override", "rejected", "narrowed", "undecided"]


@dataclass
class Agreement:
    """Counts for one scope (a run, or all runs)."""

    claims: int = 0
    with_shadow: int = 0
    # counted verdict -> shadow verdict -> claims (only claims judged with a shadow family)
    shadow_vs_counted: dict[str, dict[str, int]] = field(default_factory=dict)
    # counted verdict -> reviewer decision -> claims
    decisions: dict[str, dict[str, int]] = field(default_factory=dict)
    # shadow verdict -> reviewer decision -> claims
    shadow_decisions: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, status: str, shadow: str, decision: str) -> None:
        self.claims += 1
        _bump(self.decisions, status, decision)
        if shadow:
            self.with_shadow += 1
            _bump(self.shadow_vs_counted, status, shadow)
            _bump(self.shadow_decisions, shadow, decision)

    @property
    def shadow_changed(self) -> int:
        return sum(
            n
            for status, row in self.shadow_vs_counted.items()
            for s, n in row.items()
            if s != status
        )

    def agreement(self, table: dict[str, dict[str, int]]) -> tuple[int, int]:
        """(agreeing, decided) over PASS and FAIL verdicts with a final decision."""
        agree = table.get("pass", {}).get("approved", 0) + table.get("fail", {}).get("rejected", 0)
        decided = sum(
            table.get(v, {}).get(d, 0)
            for v in ("pass", "fail")
            for d in ("approved", "override", "rejected")
        )
        return agree, decided


def _bump(table: dict[str, dict[str, int]], row: str, column: str) -> None:
    cells = table.setdefault(row, {})
    cells[column] = cells.get(column, 0) + 1


@dataclass
class ShadowReport:
    overall: Agreement
    runs: list[tuple[Run, Agreement]]


def decision_of(claim: Claim) -> str:
    """The claim's final review outcome in one word (see module docstring)."""
    if claim.review_state == ReviewState.APPROVED:
        decisions = sorted(claim.decisions.all(), key=lambda d: (d.created_at, d.pk))
        last = decisions[-1] if decisions else None
        if last is not None and last.action == Action.APPROVE and last.override:
            return "override"
        return "approved"
    if claim.review_state == ReviewState.REJECTED:
        return "rejected"
    if claim.review_state in (ReviewState.NARROWED, ReviewState.OVERRIDING):
        return "narrowed" if claim.review_state == ReviewState.NARROWED else "undecided"
    return "undecided"


def run_agreement(run: Run) -> Agreement:
    return shadow_report([run]).overall


def shadow_report(runs: Iterable[Run]) -> ShadowReport:
    overall = Agreement()
    per_run: list[tuple[Run, Agreement]] = []
    for run in runs:
        agreement = Agreement()
        claims = (
            Claim.objects.filter(run=run)
            .exclude(status=Verdict.PENDING)
            .prefetch_related("decisions")
            .order_by("pk")
        )
        for claim in claims:
            decision = decision_of(claim)
            agreement.add(claim.status, claim.shadow_status, decision)
            overall.add(claim.status, claim.shadow_status, decision)
        per_run.append((run, agreement))
    return ShadowReport(overall=overall, runs=per_run)
