"""Scoring of ``bench_runs``: did a run's ledger surface the sentences a gold standard marks?

Pure: the command turns each run's kept claims into :class:`RankedClaim` records (rank by
relevance, the source and snapshot offsets of each anchor sentence) and each SciFact claim
into :class:`GoldQuestion` (gold abstracts and the snapshot offsets of their rationale
sentences). A claim *hits* when one of its anchors overlaps a gold rationale sentence of a
gold abstract by at least half of the shorter of the two spans (the project's sentence
splitter and SciFact's sentence list differ at the edges).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

TOP_K = 10


@dataclass(frozen=True)
class AnchorSpan:
    source_key: str  # corpus:scifact:<doc id>
    start: int
    end: int


@dataclass(frozen=True)
class RankedClaim:
    text: str
    relevance: float
    anchors: tuple[AnchorSpan, ...]
    role: str = ""  # what the miner's sentence-role classifier calls its anchor sentence


@dataclass(frozen=True)
class GoldQuestion:
    claim_id: int
    text: str
    rationale_spans: dict[str, tuple[tuple[int, int], ...]]  # source key -> gold spans


@dataclass(frozen=True)
class QuestionScore:
    claim_id: int
    hit_at_10: bool
    hit_anywhere: bool
    gold_source_found: bool
    claims: int
    method_or_aim: int
    wall_s: float
    first_hit_rank: int | None = None  # 1-based rank of the first claim on a gold sentence

    def as_dict(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "hit_at_10": self.hit_at_10,
            "hit_anywhere": self.hit_anywhere,
            "gold_source_found": self.gold_source_found,
            "claims": self.claims,
            "method_or_aim": self.method_or_aim,
            "wall_s": round(self.wall_s, 2),
            "first_hit_rank": self.first_hit_rank,
        }


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    shared = min(a[1], b[1]) - max(a[0], b[0])
    shorter = min(a[1] - a[0], b[1] - b[0])
    return shorter > 0 and shared >= 0.5 * shorter


def on_gold(claim: RankedClaim, gold: GoldQuestion) -> bool:
    return any(
        overlaps((anchor.start, anchor.end), span)
        for anchor in claim.anchors
        for span in gold.rationale_spans.get(anchor.source_key, ())
    )


def rank(claims: Sequence[RankedClaim]) -> list[RankedClaim]:
    """Highest relevance first; ties keep the ledger's order."""
    return sorted(claims, key=lambda c: -c.relevance)


def score_question(
    gold: GoldQuestion,
    claims: Sequence[RankedClaim],
    run_sources: set[str],
    wall_s: float,
    method_roles: frozenset[str],
) -> QuestionScore:
    ranked = rank(claims)
    hits = [i for i, claim in enumerate(ranked, start=1) if on_gold(claim, gold)]
    return QuestionScore(
        claim_id=gold.claim_id,
        hit_at_10=bool(hits) and hits[0] <= TOP_K,
        hit_anywhere=bool(hits),
        gold_source_found=bool(set(gold.rationale_spans) & run_sources),
        claims=len(ranked),
        method_or_aim=sum(1 for c in ranked if c.role in method_roles),
        wall_s=wall_s,
        first_hit_rank=hits[0] if hits else None,
    )


@dataclass
class RunsBench:
    scores: list[QuestionScore] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        n = len(self.scores)
        if not n:
            return {"questions": 0}
        claims = sum(s.claims for s in self.scores)
        return {
            "questions": n,
            "rationale_recall_at_10": round(sum(s.hit_at_10 for s in self.scores) / n, 4),
            "rationale_recall": round(sum(s.hit_anywhere for s in self.scores) / n, 4),
            "gold_source_recall": round(sum(s.gold_source_found for s in self.scores) / n, 4),
            "claims_per_question": round(claims / n, 2),
            "method_or_aim_share": round(
                sum(s.method_or_aim for s in self.scores) / claims if claims else 0.0, 4
            ),
            "wall_s_per_question": round(sum(s.wall_s for s in self.scores) / n, 2),
        }
