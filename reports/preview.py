"""What a report built now would print, and what it would leave out and why.

The reports page shows this before anyone presses "Build report": approved claims with
a verified supporting quote are printed as they are; approved claims *without* one (a
reviewer approved a claim the verifiers found UNCERTAIN, or approved it against their
verdict) are printed too, marked as such and citing the sentence they were mined from —
never silently dropped; every other claim is left out, its text withheld, and listed in
Appendix A with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from ledger.models import Claim, ReviewState, Verdict
from research.models import Run
from review.services.capsules import approved_capsules, unsupported_reason
from review.services.gate import ledger_claims, review_order


@dataclass(frozen=True)
class PreviewClaim:
    """An approved claim the report prints with a mark, and why it carries one."""

    code: UUID
    text: str
    status: str
    why: str


@dataclass(frozen=True)
class ReportPreview:
    verified: int = 0  # approved, PASS, with a supporting quote: printed as they are
    marked: list[PreviewClaim] = field(default_factory=list)  # printed, marked
    left_out: list[tuple[str, int]] = field(default_factory=list)  # (why, how many)

    @property
    def printed(self) -> int:
        return self.verified + len(self.marked)

    @property
    def left_out_total(self) -> int:
        return sum(count for _, count in self.left_out)


def report_preview(run: Run) -> ReportPreview:
    """Sort the run's ledger into printed, printed with a mark, and left out (with why)."""
    approved = {capsule.code for capsule in approved_capsules(run)}
    claims = ledger_claims(run).prefetch_related("evidence")
    verified = 0
    marked: list[PreviewClaim] = []
    left_out: dict[str, int] = {}
    for claim in review_order(claims):
        if str(claim.code) in approved:
            why = unsupported_reason(claim)
            if why:
                marked.append(PreviewClaim(claim.code, claim.text, claim.status, why))
            else:
                verified += 1
            continue
        reason = left_out_reason(claim)
        left_out[reason] = left_out.get(reason, 0) + 1
    return ReportPreview(verified, marked, sorted(left_out.items(), key=lambda kv: -kv[1]))


def left_out_reason(claim: Claim) -> str:
    """Why a claim of the ledger would not be printed (its text is withheld)."""
    if claim.review_state == ReviewState.REJECTED:
        return "rejected by a reviewer"
    if claim.review_state == ReviewState.NARROWED:
        return "narrowed, and the narrowed text is not approved yet"
    if claim.review_state == ReviewState.OVERRIDING:
        return "an override awaiting a second reviewer's confirmation"
    if claim.review_state == ReviewState.APPROVED:
        if claim.status != Verdict.PASS:
            return (
                f"approved without a written override of its {claim.get_status_display()} "
                "verdict (a claim the verifiers did not PASS needs a reviewer's reason)"
            )
        return "approved, but the approval is not of its current text"
    if claim.status == Verdict.FAIL:
        return "failed verification and not approved"
    return "not reviewed: only approved claims are printed"
