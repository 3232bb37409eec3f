"""Reciprocal rank fusion and document roll-up.

RRF(d) = sum over lists i of w_i / (k + rank_i(d)); ranks are 1-based. Ties break on the
best single rank, then on the passage id, so the order is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from research.pipeline.retrieve.records import Hit, RetrieverHit


def _dedupe(ranked: Sequence[RetrieverHit]) -> list[RetrieverHit]:
    """Keep each passage's best rank within one list."""
    seen: dict[int, RetrieverHit] = {}
    for hit in ranked:
        best = seen.get(hit.passage_id)
        if best is None or hit.rank < best.rank:
            seen[hit.passage_id] = hit
    return sorted(seen.values(), key=lambda h: h.rank)


def rrf(
    lists: Mapping[str, Sequence[RetrieverHit]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Hit]:
    """Fuse named ranked lists into hits that keep every list's rank and raw score."""
    fused: dict[int, Hit] = {}
    for name, ranked in lists.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for item in _dedupe(ranked):
            hit = fused.get(item.passage_id)
            if hit is None:
                hit = fused[item.passage_id] = Hit(
                    passage_id=item.passage_id, score=0.0, source_id=item.source_id
                )
            hit.score += weight / (k + item.rank)
            hit.ranks[name] = item.rank
            hit.scores[name] = item.score
    return sorted(fused.values(), key=_order)


def rrf_documents(
    lists: Mapping[str, Sequence[RetrieverHit]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Hit]:
    """RRF at document level: each list rolled up to sources first, then fused by source.

    A fused document is represented by the passage of its best single-list rank.
    """
    by_source: dict[int, Hit] = {}
    best_rank: dict[int, int] = {}
    for name, ranked in rollup_lists(lists).items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for item in ranked:
            hit = by_source.get(item.source_id)
            if hit is None:
                hit = by_source[item.source_id] = Hit(
                    passage_id=item.passage_id, score=0.0, source_id=item.source_id
                )
                best_rank[item.source_id] = item.rank
            elif item.rank < best_rank[item.source_id]:
                hit.passage_id = item.passage_id
                best_rank[item.source_id] = item.rank
            hit.score += weight / (k + item.rank)
            hit.ranks[name] = item.rank
            hit.scores[name] = item.score
    return sorted(by_source.values(), key=_order)


def _order(hit: Hit) -> tuple[float, int, int]:
    return (-hit.score, min(hit.ranks.values(), default=0), hit.passage_id)


def single(name: str, ranked: Sequence[RetrieverHit]) -> list[Hit]:
    """One retriever alone, as hits (score = 1 / rank, raw score kept under its name)."""
    return rrf({name: ranked}, k=0)


def rollup_lists(
    lists: Mapping[str, Sequence[RetrieverHit]],
) -> dict[str, list[RetrieverHit]]:
    """Each list at document level: a source's best passage, ranks renumbered from 1."""
    out: dict[str, list[RetrieverHit]] = {}
    for name, ranked in lists.items():
        seen: set[int] = set()
        docs: list[RetrieverHit] = []
        for item in sorted(ranked, key=lambda h: h.rank):
            if item.source_id in seen:
                continue
            seen.add(item.source_id)
            docs.append(RetrieverHit(item.passage_id, len(docs) + 1, item.score, item.source_id))
        out[name] = docs
    return out


def rollup_hits(hits: Sequence[Hit]) -> list[Hit]:
    """Document roll-up of fused hits: each source once, as its best passage, order kept."""
    seen: set[int] = set()
    out = []
    for hit in hits:
        if hit.source_id not in seen:
            seen.add(hit.source_id)
            out.append(hit)
    return out
