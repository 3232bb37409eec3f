"""Builders for verification tests: claims, evidence items and votes bound correctly."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from research.pipeline.text import passage_fingerprint
from research.pipeline.verify.records import ClaimInput, EvidenceItem, PoolName, Vote
from tests.fake_openai import Seen

Policy = Callable[[str, str], dict[str, Any]]  # (passage id, passage text) -> vote row


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


def judging(policy: Policy) -> Callable[[Seen], dict[str, Any]]:
    """A fake LLM judge's reply (for :func:`tests.fake_openai.fake_openai`): ``policy``'s
    vote on each ``[id]`` passage of the prompt."""

    def answer(request: Seen) -> dict[str, Any]:
        passages = re.findall(r"^\[([^\]]+)\]\n(.*?)(?=^\[|\Z)", request.prompt, flags=re.M | re.S)
        return {
            "votes": [
                policy(label, text.strip()) | {"evidence_id": label} for label, text in passages
            ]
        }

    return answer
