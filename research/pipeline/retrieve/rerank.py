"""Reranking stage: apply a cross-encoder to the head of the fused list, or say there is none.

Without a reranker the fused order stands and the result notes ``reranker: none`` with the
reason, so a run record shows the stage did not run instead of pretending it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from research.pipeline.retrieve.records import Hit

RERANK = "rerank"


class Scorer(Protocol):
    """What the stage needs from a reranker (``research.providers.reranker.Reranker``)."""

    @property
    def label(self) -> str: ...

    def score(self, query: str, texts: Sequence[str]) -> list[float]: ...


def passage_text(hit: Hit) -> str:
    """The text a cross-encoder reads: title, section path and passage, as embedded."""
    return "\n".join(part for part in (hit.title, hit.section_path, hit.text) if part)


def rerank(
    query: str,
    hits: Sequence[Hit],
    reranker: Scorer | None,
    *,
    reason: str = "",
    top_n: int = 50,
) -> tuple[list[Hit], dict[str, str]]:
    """Reorder the first ``top_n`` hits by the reranker's score; the rest keep their order."""
    if reranker is None:
        return list(hits), {"reranker": "none", "reranker_reason": reason or "not configured"}
    head, tail = list(hits[:top_n]), list(hits[top_n:])
    scores = reranker.score(query, [passage_text(h) for h in head]) if head else []
    scored = [
        replace(h, rerank_score=s, scores={**h.scores, RERANK: s})
        for h, s in zip(head, scores, strict=True)
    ]
    scored.sort(key=lambda h: (-(h.rerank_score or 0.0), h.passage_id))
    for rank, hit in enumerate(scored, start=1):
        hit.ranks = {**hit.ranks, RERANK: rank}
    return scored + tail, {"reranker": reranker.label}


# The notes ``rerank`` returns; the run records them once, on its retrieving stage.
RANKING_NOTES = frozenset({"reranker", "reranker_reason"})


def ranking_notes(notes: dict[str, str]) -> dict[str, str]:
    """A stage's notes with the reranker's two notes said in one line of words."""
    kept = {key: text for key, text in notes.items() if key not in RANKING_NOTES}
    if notes.get("reranker") == "none":
        reason = notes.get("reranker_reason") or "not configured"
        kept["reranker"] = (
            f"none ({reason}): library search and passage retrieval were ranked by "
            "BM25 + dense fusion only"
        )
    elif notes.get("reranker"):
        kept["reranker"] = notes["reranker"]
    return kept
