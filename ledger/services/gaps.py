"""The only writer of EvidenceGap rows: subquestions the library had no finding for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ledger.models import EvidenceGap
from research.models import Run, Subquestion
from research.pipeline.claims.records import EvidenceGapDraft


def do_record_gaps(
    run: Run, gaps: Sequence[EvidenceGapDraft], subquestions: Mapping[str, Subquestion]
) -> list[EvidenceGap]:
    """One row per gap and subquestion (what was searched, why nothing qualified); idempotent."""
    saved: list[EvidenceGap] = []
    for gap in gaps:
        row, _ = EvidenceGap.objects.get_or_create(
            run=run,
            subquestion=subquestions.get(gap.subquestion),
            defaults={
                "queries": list(gap.queries),
                "passages": gap.passages,
                "candidates": gap.candidates,
                "best_relevance": gap.best_relevance,
                "reason": gap.reason,
            },
        )
        saved.append(row)
    return saved
