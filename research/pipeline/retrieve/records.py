"""Typed records of the retrieval stages: requests, per-retriever hits, fused hits, results.

A fused hit keeps every retriever's rank and raw score (provenance): an evidence link can
show that a passage was BM25 #3 and dense #41, and the reranker's score if one ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Mode = Literal["bm25", "dense", "hybrid", "hybrid+rerank"]
Level = Literal["passage", "document"]
MODES: tuple[Mode, ...] = ("bm25", "dense", "hybrid", "hybrid+rerank")


@dataclass(frozen=True, slots=True)
class RetrieverHit:
    """One retriever's result: a passage at a 1-based rank with the retriever's raw score."""

    passage_id: int
    rank: int
    score: float
    source_id: int = 0  # the passage's source: the document for roll-up


@dataclass(slots=True)
class Hit:
    """A fused candidate passage; metadata fields are filled once the passage is loaded."""

    passage_id: int
    score: float  # fused score (RRF), or the single retriever's score after its rank
    ranks: dict[str, int] = field(default_factory=dict)  # retriever name -> 1-based rank
    scores: dict[str, float] = field(default_factory=dict)  # retriever name -> raw score
    source_id: int = 0
    snapshot_id: int = 0
    canonical_id: str = ""
    cluster: str = ""  # near-duplicate cluster of the source; "" means the source alone
    source_type: str = ""
    published_date: date | None = None
    kind: str = ""
    start: int = 0
    end: int = 0
    section_path: str = ""
    title: str = ""
    text: str = ""
    fingerprint: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)  # the source's metadata
    embedding: NDArray[np.float32] | None = None
    rerank_score: float | None = None

    @property
    def cluster_key(self) -> str:
        return self.cluster or f"source:{self.source_id}"

    def provenance(self) -> dict[str, Any]:
        """What an EvidenceLink stores in ``retrieval``: every retriever's rank and score."""
        out: dict[str, Any] = {"fused": self.score, "ranks": dict(self.ranks)}
        out["scores"] = dict(self.scores)
        if self.rerank_score is not None:
            out["rerank"] = self.rerank_score
        return out


@dataclass(frozen=True)
class Filters:
    """Restrict candidates: the plan's libraries, source types, a publication date range."""

    library_ids: tuple[int, ...] = ()
    source_types: tuple[str, ...] = ()
    published_after: date | None = None  # inclusive
    published_before: date | None = None  # inclusive
    passage_kinds: tuple[str, ...] = ("chunk",)


@dataclass(frozen=True)
class DiversityConfig:
    """MMR over embeddings with caps; ``mmr_lambda=1`` is pure relevance order."""

    mmr_lambda: float = 0.7
    per_source: int = 2
    per_cluster: int = 3
    duplicate_cosine: float = 0.97  # a passage this close to a chosen one is a duplicate


@dataclass(frozen=True)
class RetrievalRequest:
    text: str
    mode: Mode = "hybrid+rerank"  # the production path: reranks, or notes "reranker: none"
    limit: int = 10
    candidates: int = 100  # per retriever and per query variant
    level: Level = "passage"
    query_class: str = ""
    filters: Filters = field(default_factory=Filters)
    diversity: DiversityConfig | None = None


@dataclass
class RetrievalResult:
    hits: list[Hit]
    notes: dict[str, str] = field(default_factory=dict)  # e.g. {"reranker": "none", ...}
    timings_ms: dict[str, float] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PooledHit:
    """A passage in a subquestion's evidence pool, with its fused score."""

    passage_id: int
    source_id: int
    score: float = 0.0


@dataclass(frozen=True)
class EvidencePools:
    """A subquestion's support and refute pools, as the retrieve stage saves them.

    JSON (the stage's cursor): ``{"support": [{passage_id, source_id, score}], "refute":
    […]}``.
    """

    support: tuple[PooledHit, ...] = ()
    refute: tuple[PooledHit, ...] = ()

    def hits(self) -> tuple[PooledHit, ...]:
        return self.support + self.refute

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "support": [_hit_json(h) for h in self.support],
            "refute": [_hit_json(h) for h in self.refute],
        }

    @classmethod
    def from_json(cls, data: object) -> EvidencePools:
        if not isinstance(data, dict):
            return cls()
        return cls(support=_hits(data.get("support")), refute=_hits(data.get("refute")))


def _hit_json(hit: PooledHit) -> dict[str, Any]:
    return {"passage_id": hit.passage_id, "source_id": hit.source_id, "score": hit.score}


def _hits(items: object) -> tuple[PooledHit, ...]:
    if not isinstance(items, list):
        return ()
    return tuple(
        PooledHit(int(i["passage_id"]), int(i.get("source_id") or 0), float(i.get("score", 0.0)))
        for i in items
        if isinstance(i, dict) and "passage_id" in i
    )
