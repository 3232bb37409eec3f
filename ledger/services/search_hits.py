"""The only writer of SearchHit rows: what each query found, with its provenance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ledger.models import SearchHit
from research.models import Query, Run


@dataclass(frozen=True)
class FoundHit:
    """One normalized search result (library or web adapter), before it is a SearchHit."""

    rank: int
    score: float | None
    canonical_id: str
    record: dict[str, Any]  # the adapter's normalized record, kept as provenance
    source_id: int | None = None


def do_record_search_hits(
    run: Run, *, query_key: str, query_text: str, adapter: str, hits: Sequence[FoundHit]
) -> int:
    """Store one query's results; rows already written by an earlier attempt are kept."""
    query = Query.objects.filter(plan_version_id=run.plan_version_id, key=query_key).first()
    rows = [
        SearchHit(
            run=run,
            query=query,
            query_text=query_text,
            adapter=adapter,
            rank=hit.rank,
            raw_score=hit.score,
            canonical_id=hit.canonical_id[:600],
            source_id=hit.source_id,
            record=hit.record,
        )
        for hit in hits
    ]
    SearchHit.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def do_link_hits_to_source(run: Run, canonical_id: str, source_id: int) -> int:
    """Point a run's hits for one canonical id at the Source that ingesting them made."""
    return SearchHit.objects.filter(run=run, canonical_id=canonical_id).update(source_id=source_id)
