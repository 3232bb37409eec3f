"""Claim mining: findings from evidence passages, each anchored to a verbatim sentence.

Entry points: :func:`mine_run` (a run's subquestions: relevance, scope, merging across
sources, budgets, contested pairs, evidence gaps), :func:`mine_claims` (one set of
passages, the same path) and :func:`mine_claims_llm` (an OpenAI-compatible atomizer whose
every claim must quote the passage verbatim).
"""

from __future__ import annotations

from research.pipeline.claims.atomize import llm_proposals, mine_claims_llm
from research.pipeline.claims.facets import Facets
from research.pipeline.claims.mine import split_coordination
from research.pipeline.claims.records import (
    Anchor,
    ClaimDraft,
    ContestedPair,
    DroppedCandidate,
    EvidenceGapDraft,
    MergedCandidate,
    MineConfig,
    MiningResult,
    PassageInput,
    RunInput,
    RunMining,
    SubquestionInput,
)
from research.pipeline.claims.select import mine_claims, mine_run

__all__ = [
    "Anchor",
    "ClaimDraft",
    "ContestedPair",
    "DroppedCandidate",
    "EvidenceGapDraft",
    "Facets",
    "MergedCandidate",
    "MineConfig",
    "MiningResult",
    "PassageInput",
    "RunInput",
    "RunMining",
    "SubquestionInput",
    "llm_proposals",
    "mine_claims",
    "mine_claims_llm",
    "mine_run",
    "split_coordination",
]
