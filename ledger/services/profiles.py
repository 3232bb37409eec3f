"""The only writer of SourceProfile rows: each source's study design and population."""

from __future__ import annotations

from collections.abc import Mapping

from ledger.models import Source, SourceProfile
from research.pipeline.claims.design import SourceProfile as ProfileRecord


def do_save_source_profiles(profiles: Mapping[str, ProfileRecord]) -> int:
    """Upsert the profile of every source named (by canonical id); returns how many."""
    sources = Source.objects.filter(canonical_id__in=list(profiles)).only("pk", "canonical_id")
    saved = 0
    for source in sources:
        record = profiles[source.canonical_id]
        SourceProfile.objects.update_or_create(
            source=source,
            defaults={
                "design": record.design,
                "design_cue": record.design_cue[:120],
                "humans": record.humans,
                "age_min": record.age_min,
                "age_max": record.age_max,
                "age_text": record.age_text[:80],
                "population": record.population[:120],
                "year": record.year,
            },
        )
        saved += 1
    return saved
