"""The only writer of Disposition rows: every change of a claim's disposition, with why."""

from __future__ import annotations

from ledger.models import Claim


def record_disposition(claim: Claim, state: str, reason: str, stage: str) -> None:
    """Append the change to the claim's history and set its fields (the caller saves)."""
    claim.disposition = state
    claim.disposition_reason = reason
    claim.dispositions.create(state=state, reason=reason, stage=stage)


def do_dispose(claim: Claim, state: str, reason: str, stage: str) -> None:
    """Set and save the claim's disposition, appending the change to its history."""
    record_disposition(claim, state, reason, stage)
    claim.save(update_fields=["disposition", "disposition_reason"])
