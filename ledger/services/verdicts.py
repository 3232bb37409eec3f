"""The writer of a claim's verdict: links for the judged passages, votes, status, capsule.

``do_record_verdict(claim, ClaimVerdict, items)`` stores what a pure verification
(``research.pipeline.verify.verify_claim``) decided, in one transaction, and returns the
tally the run record counts (``research.services.runs.do_count_verification``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction

from ledger.models import Claim, DispositionState, Verdict
from ledger.services.dispositions import do_dispose
from ledger.services.evidence import do_link_judged_evidence
from ledger.services.votes import do_save_votes
from research.pipeline.verify.records import ClaimVerdict, EvidenceItem, Status

STATUS_TO_VERDICT = {
    Status.PASS: Verdict.PASS,
    Status.FAIL: Verdict.FAIL,
    Status.UNCERTAIN: Verdict.UNCERTAIN,
    Status.UNVERIFIABLE: Verdict.UNVERIFIABLE,
}


@dataclass(frozen=True)
class VerdictTally:
    """What one recorded verdict adds to the run's ``counters["verification"]``."""

    status: str
    votes: int = 0
    discarded: int = 0
    discard_reasons: dict[str, int] = field(default_factory=dict)
    shadow_status: str = ""  # what the shadow families would have made of it
    unavailable: dict[str, str] = field(default_factory=dict)  # family -> why


def do_record_verdict(
    claim: Claim, verdict: ClaimVerdict, items: Sequence[EvidenceItem]
) -> VerdictTally:
    """Links for every judged passage, every vote (valid or not), status and disposition."""
    if verdict.claim_fingerprint != claim.fingerprint:
        raise ValueError("the verdict was reached for another wording of this claim")
    with transaction.atomic():
        links = do_link_judged_evidence(claim, verdict, items)
        counts = do_save_votes(claim, verdict, links)
        _apply(claim, verdict)
    return VerdictTally(
        status=verdict.status.value,
        votes=counts.votes,
        discarded=counts.discarded,
        discard_reasons=verdict.discard_counts(),
        shadow_status=verdict.shadow_status,
        unavailable=dict(verdict.unavailable),
    )


def _apply(claim: Claim, verdict: ClaimVerdict) -> None:
    claim.status = STATUS_TO_VERDICT.get(verdict.status, Verdict.UNCERTAIN)
    claim.shadow_status = (
        STATUS_TO_VERDICT[Status(verdict.shadow_status)] if verdict.shadow_status else ""
    )
    claim.rationale = _rationale(verdict)
    claim.flags = list(verdict.flags)
    claim.confidence = verdict.confidence
    claim.independent_sources = verdict.independent_sources
    claim.support_count = len(verdict.support_ids)
    claim.refute_count = len(verdict.refute_ids)
    claim.allowed_scope = claim.text if verdict.status == Status.PASS else ""
    claim.prohibited_overstatements = _prohibited(claim, verdict)
    claim.save(
        update_fields=[
            "status",
            "shadow_status",
            "rationale",
            "flags",
            "confidence",
            "independent_sources",
            "support_count",
            "refute_count",
            "allowed_scope",
            "prohibited_overstatements",
        ]
    )
    do_dispose(
        claim,
        DispositionState.KEPT,
        f"verified {verdict.status.value.upper()}; kept in the ledger for review",
        stage="verifying",
    )


def _rationale(verdict: ClaimVerdict) -> str:
    parts = [verdict.rationale]
    counts = verdict.discard_counts()
    if counts:
        parts.append(
            "Discarded, not counted: "
            + ", ".join(f"{n} × {reason}" for reason, n in sorted(counts.items()))
            + "."
        )
    if verdict.unavailable:
        parts.append(
            "Unavailable (configured, but gave no vote): "
            + "; ".join(f"{k}: {v}" for k, v in verdict.unavailable.items())
            + "."
        )
    if verdict.notes:
        parts.append("Not run: " + "; ".join(f"{k}: {v}" for k, v in verdict.notes.items()))
    if verdict.shadow_status:
        parts.append(
            f"Shadow families (not counted) would make it {verdict.shadow_status.upper()}."
        )
    return " ".join(parts)


def _prohibited(claim: Claim, verdict: ClaimVerdict) -> list[str]:
    out = ["claiming it beyond the setting of the quoted evidence"]
    if claim.hedges:
        out.append(f"dropping the hedge ({', '.join(claim.hedges)})")
    if verdict.independent_sources < 2:
        out.append("presenting it as independently corroborated")
    if claim.numbers:
        out.append("changing or rounding its numbers or units")
    return out
