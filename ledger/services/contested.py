"""The only writer of ContestedPair rows: conflicting findings a reviewer sees side by side."""

from __future__ import annotations

from collections.abc import Sequence

from ledger.models import Claim, ContestedPair
from research.models import Run
from research.pipeline.claims.records import ContestedPair as PairRecord


def do_record_contested(run: Run, pairs: Sequence[PairRecord]) -> list[ContestedPair]:
    """One row per pair of the run's claims (by fingerprint); idempotent."""
    fingerprints = {fp for pair in pairs for fp in (pair.first, pair.second)}
    claims = {c.fingerprint: c for c in Claim.objects.filter(run=run, fingerprint__in=fingerprints)}
    saved: list[ContestedPair] = []
    for pair in pairs:
        a, b = claims.get(pair.first), claims.get(pair.second)
        if a is None or b is None or a.pk == b.pk:
            continue
        first, second = (a, b) if a.pk < b.pk else (b, a)
        row, _ = ContestedPair.objects.get_or_create(
            claim=first, other=second, defaults={"run": run, "reason": pair.reason}
        )
        saved.append(row)
    return saved
