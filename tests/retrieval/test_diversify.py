"""MMR and per-source / per-cluster caps on a constructed pool."""

from __future__ import annotations

import numpy as np

from research.pipeline.retrieve.diversify import select
from research.pipeline.retrieve.records import DiversityConfig, Hit


def unit(*values):
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def hit(pid, score, source, emb, cluster=""):
    return Hit(passage_id=pid, score=score, source_id=source, cluster=cluster, embedding=emb)


def pool():
    """Five passages: 1-3 near-identical (source 10), 4 different topic, 5 a third topic."""
    return [
        hit(1, 1.00, 10, unit(1, 0, 0)),
        hit(2, 0.95, 10, unit(1, 0.05, 0)),
        hit(3, 0.90, 11, unit(1, 0.02, 0.01)),
        hit(4, 0.60, 12, unit(0, 1, 0)),
        hit(5, 0.50, 13, unit(0, 0, 1)),
    ]


def ids(hits):
    return [h.passage_id for h in hits]


def test_it_keeps_relevance_order_with_lambda_one_and_no_caps():
    cfg = DiversityConfig(mmr_lambda=1.0, per_source=99, per_cluster=99, duplicate_cosine=1.1)
    assert ids(select(pool(), cfg, 5)) == [1, 2, 3, 4, 5]


def test_it_promotes_different_passages_by_mmr():
    cfg = DiversityConfig(mmr_lambda=0.5, per_source=99, per_cluster=99, duplicate_cosine=1.1)
    chosen = ids(select(pool(), cfg, 3))
    # relevance scaled to [0,1]: 1 -> 1.0, 2 -> 0.9, 3 -> 0.8, 4 -> 0.2, 5 -> 0.0
    # step 2: passage 2 = .5*.9 - .5*~1.0 < 0 ; passage 4 = .5*.2 - .5*0 = .1 -> 4
    # step 3: passage 5 = 0 - 0 = 0 beats 2 and 3 (negative) -> 5
    assert chosen == [1, 4, 5]


def test_it_caps_passages_per_source():
    cfg = DiversityConfig(mmr_lambda=1.0, per_source=1, per_cluster=99, duplicate_cosine=1.1)
    chosen = select(pool(), cfg, 5)
    assert ids(chosen) == [1, 3, 4, 5]  # 2 is source 10's second passage
    assert len({h.source_id for h in chosen}) == len(chosen)


def test_it_caps_passages_per_near_duplicate_cluster():
    hits = pool()
    for h in hits[:3]:
        h.cluster = "press-release-7"  # copies of one story across sources 10 and 11
    cfg = DiversityConfig(mmr_lambda=1.0, per_source=99, per_cluster=2, duplicate_cosine=1.1)
    assert ids(select(hits, cfg, 5)) == [1, 2, 4, 5]


def test_it_drops_near_copies_by_embedding():
    cfg = DiversityConfig(mmr_lambda=1.0, per_source=99, per_cluster=99, duplicate_cosine=0.99)
    assert ids(select(pool(), cfg, 5)) == [1, 4, 5]


def test_it_stops_at_the_limit_and_handles_an_empty_pool():
    cfg = DiversityConfig()
    assert len(select(pool(), cfg, 2)) == 2
    assert select([], cfg, 5) == []
