"""The writer of a claim's counter-evidence record (``Claim.counter_evidence``).

The record is typed (``research.pipeline.counter.CounterRecord``) on both sides of the
JSON column: saved with ``to_json`` here, parsed with ``from_json`` by
``ledger.readers.counter_record``.
"""

from __future__ import annotations

from ledger.models import Claim
from research.pipeline.counter import CounterRecord


def do_save_counter_evidence(claim: Claim, record: CounterRecord) -> Claim:
    """Save what the counter-evidence stage searched and found for the claim."""
    claim.counter_evidence = record.to_json()
    claim.save(update_fields=["counter_evidence"])
    return claim
