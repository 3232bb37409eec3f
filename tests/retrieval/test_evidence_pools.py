"""A subquestion's retrieval pools as the retrieve stage saves them in its cursor."""

from __future__ import annotations

import json

from research.pipeline.retrieve.records import EvidencePools, PooledHit


def test_it_round_trips_the_pools_through_the_cursor_json():
    pools = EvidencePools(
        support=(PooledHit(1, 10, 0.03), PooledHit(2, 11, 0.01)),
        refute=(PooledHit(5, 12, 0.02),),
    )
    stored = json.loads(json.dumps(pools.to_json()))
    assert stored["support"][0] == {"passage_id": 1, "source_id": 10, "score": 0.03}
    assert EvidencePools.from_json(stored) == pools
    assert [h.passage_id for h in pools.hits()] == [1, 2, 5]


def test_it_reads_a_missing_or_malformed_pool_as_empty():
    assert EvidencePools.from_json(None) == EvidencePools()
    partial = EvidencePools.from_json({"support": [{"passage_id": 4}, "junk"], "refute": None})
    assert partial == EvidencePools(support=(PooledHit(4, 0, 0.0),))
