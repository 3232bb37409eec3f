"""Diversity: maximal marginal relevance over embeddings, with per-source and per-cluster caps.

Greedy selection: at each step take the admissible candidate maximising
``lambda * relevance - (1 - lambda) * max cosine to the passages already chosen``.
A candidate is inadmissible once its source or its near-duplicate cluster is full, or when
it is a near-copy (cosine >= ``duplicate_cosine``) of a chosen passage. Relevance is the
fused score scaled to [0, 1] over the pool, so lambda means the same for any fusion.
Support and refute pools are selected independently: one never crowds out the other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from research.pipeline.retrieve.records import DiversityConfig, Hit


def _relevance(hits: Sequence[Hit]) -> list[float]:
    scores = [h.rerank_score if h.rerank_score is not None else h.score for h in hits]
    low, high = min(scores), max(scores)
    if high - low <= 0:
        return [1.0] * len(hits)
    return [(s - low) / (high - low) for s in scores]


def _similarities(hits: Sequence[Hit]) -> np.ndarray:
    """Pairwise cosine of the hits' (normalized) embeddings; 0 where one is missing."""
    n = len(hits)
    dim = next((h.embedding.shape[0] for h in hits if h.embedding is not None), 0)
    matrix = np.zeros((n, max(dim, 1)), dtype=np.float32)
    for i, hit in enumerate(hits):
        if hit.embedding is not None:
            norm = float(np.linalg.norm(hit.embedding)) or 1.0
            matrix[i, :dim] = hit.embedding / norm
    sims: np.ndarray = matrix @ matrix.T
    return sims


def select(hits: Sequence[Hit], cfg: DiversityConfig, limit: int) -> list[Hit]:
    """Pick up to ``limit`` hits by MMR under the caps of ``cfg``."""
    if not hits or limit <= 0:
        return []
    relevance = _relevance(hits)
    sims = _similarities(hits)
    per_source: Counter[int] = Counter()
    per_cluster: Counter[str] = Counter()
    chosen: list[int] = []
    max_sim = np.full(len(hits), -np.inf)
    remaining = set(range(len(hits)))
    while remaining and len(chosen) < limit:
        best, best_value = -1, -np.inf
        for i in sorted(remaining):
            if not _admissible(hits[i], per_source, per_cluster, cfg):
                continue
            if chosen and max_sim[i] >= cfg.duplicate_cosine:
                continue
            penalty = max_sim[i] if chosen else 0.0
            value = cfg.mmr_lambda * relevance[i] - (1 - cfg.mmr_lambda) * penalty
            if value > best_value:
                best, best_value = i, value
        if best < 0:
            break
        chosen.append(best)
        remaining.discard(best)
        per_source[hits[best].source_id] += 1
        per_cluster[hits[best].cluster_key] += 1
        max_sim = np.maximum(max_sim, sims[best])
    return [hits[i] for i in chosen]


def _admissible(
    hit: Hit, per_source: Counter[int], per_cluster: Counter[str], cfg: DiversityConfig
) -> bool:
    return per_source[hit.source_id] < cfg.per_source and (
        per_cluster[hit.cluster_key] < cfg.per_cluster
    )
