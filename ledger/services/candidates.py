"""The only writer of Candidate rows: every proposition mining considered, kept or not."""

from __future__ import annotations

from typing import Any

from ledger.models import Candidate, Claim, ClaimType, SentenceRole, StudyDesign
from ledger.services.evidence import Binding
from research.models import Run, Subquestion
from research.pipeline.text import claim_fingerprint


def do_record_candidate(
    run: Run,
    subquestion: Subquestion | None,
    text: str,
    state: str,
    reason: str,
    *,
    claim: Claim | None = None,
    claim_type: str = "",
    origin: str = "",
    binding: Binding | None = None,
    relevance: float | None = None,
    role: str = "",
    design: str = "",
) -> Candidate:
    """One row per proposition per subquestion, with its source sentence when it binds.

    Idempotent: a second call for the same proposition keeps the first row.
    """
    fields: dict[str, Any] = {
        "text": text,
        "state": state,
        "reason": reason,
        "claim": claim,
        "claim_type": claim_type if claim_type in ClaimType.values else "",
        "origin": origin[:80],
        "relevance": relevance,
        "role": role if role in SentenceRole.values else "",
        "study_design": design if design in StudyDesign.values else "",
    }
    if binding is not None:
        passage, start, end = binding
        fields |= {
            "passage": passage,
            "snapshot": passage.snapshot,
            "quote": passage.snapshot.text[start:end],
            "quote_start": start,
            "quote_end": end,
        }
    candidate, _ = Candidate.objects.get_or_create(
        run=run, subquestion=subquestion, fingerprint=claim_fingerprint(text), defaults=fields
    )
    return candidate
