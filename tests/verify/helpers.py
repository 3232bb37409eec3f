"""Builders for verification tests: claims, evidence items and votes bound correctly."""

from __future__ import annotations

from research.pipeline.text import passage_fingerprint
from research.pipeline.verify.records import ClaimInput, EvidenceItem, PoolName, Vote


def item(eid: str, text: str, pool: PoolName = PoolName.SUPPORT, **fields) -> EvidenceItem:
    fields.setdefault("source_key", f"src:{eid}")
    return EvidenceItem(eid, text, passage_fingerprint(text), pool=pool, **fields)


def vote(claim: ClaimInput, ev: EvidenceItem, verdict: str, quote: str, **fields) -> Vote:
    fields.setdefault("verifier", "judge")
    fields.setdefault("family", "learned")
    fields.setdefault("score", 0.9)
    return Vote(
        claim_id=claim.claim_id,
        evidence_id=ev.evidence_id,
        verdict=verdict,
        quote=quote,
        claim_fingerprint=claim.fingerprint,
        evidence_fingerprint=ev.fingerprint,
        **fields,
    )


SUPPORT_TEXT = (
    "Trial summary. In a randomized trial of 400 adults, aspirin significantly reduced "
    "fever compared with placebo. Adverse events were rare."
)
SUPPORT_QUOTE = (
    "In a randomized trial of 400 adults, aspirin significantly reduced fever compared "
    "with placebo."
)
REFUTE_TEXT = (
    "Replication. In a second randomized trial of 900 adults, aspirin did not reduce "
    "fever compared with placebo."
)
REFUTE_QUOTE = (
    "In a second randomized trial of 900 adults, aspirin did not reduce fever compared "
    "with placebo."
)
