"""Claim mining: atomic claims from evidence passages, each anchored to a verbatim sentence.

Entry points: :func:`mine_claims` (deterministic, offline) and :func:`mine_claims_llm`
(an OpenAI-compatible atomizer whose every claim must quote the passage verbatim).
"""

from __future__ import annotations

from research.pipeline.claims.atomize import mine_claims_llm
from research.pipeline.claims.mine import mine_claims, split_coordination
from research.pipeline.claims.records import (
    Anchor,
    ClaimDraft,
    DroppedCandidate,
    MineConfig,
    MiningResult,
    PassageInput,
)

__all__ = [
    "Anchor",
    "ClaimDraft",
    "DroppedCandidate",
    "MineConfig",
    "MiningResult",
    "PassageInput",
    "mine_claims",
    "mine_claims_llm",
    "split_coordination",
]
