"""Reciprocal rank fusion on hand-computed examples, and document roll-up."""

from __future__ import annotations

import pytest

from research.pipeline.retrieve.fuse import rollup_hits, rollup_lists, rrf, rrf_documents
from research.pipeline.retrieve.records import RetrieverHit


def ranked(*ids, source_of=None):
    source_of = source_of or {}
    return [
        RetrieverHit(pid, rank, 10.0 - rank, source_of.get(pid, pid))
        for rank, pid in enumerate(ids, 1)
    ]


def test_it_sums_reciprocal_ranks_by_hand():
    # bm25: A=1 B=2 C=3 ; dense: C=1 A=2 D=3 ; k = 60
    fused = rrf({"bm25": ranked(1, 2, 3), "dense": ranked(3, 1, 4)}, k=60)
    scores = {h.passage_id: h.score for h in fused}
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[4] == pytest.approx(1 / 63)
    # A (1/61 + 1/62) > C (1/61 + 1/63) > B (1/62) > D (1/63)
    assert [h.passage_id for h in fused] == [1, 3, 2, 4]


def test_it_keeps_every_retrievers_rank_and_raw_score():
    fused = rrf({"bm25": ranked(1, 2), "dense": ranked(2)}, k=60)
    by_id = {h.passage_id: h for h in fused}
    assert by_id[2].ranks == {"bm25": 2, "dense": 1}
    assert by_id[2].scores == {"bm25": 8.0, "dense": 9.0}
    assert by_id[1].ranks == {"bm25": 1}
    assert by_id[2].provenance()["ranks"] == {"bm25": 2, "dense": 1}


def test_it_lets_k_trade_a_top_rank_against_agreement():
    # X (10) is first in list a only; Y (20) is fourth in both lists.
    lists = {"a": ranked(10, 11, 12, 20), "b": ranked(13, 14, 15, 20)}
    # k=1: X = 1/2 = 0.5 ; Y = 1/5 + 1/5 = 0.4 -> X before Y
    small_k = [h.passage_id for h in rrf(lists, k=1)]
    assert small_k.index(10) < small_k.index(20)
    # k=60: X = 1/61 = 0.0164 ; Y = 2/64 = 0.03125 -> Y before X (agreement wins)
    large_k = [h.passage_id for h in rrf(lists, k=60)]
    assert large_k[0] == 20
    assert large_k.index(20) < large_k.index(10)


def test_it_weights_lists():
    fused = rrf({"bm25": ranked(1), "dense": ranked(2)}, k=60, weights={"dense": 2.0})
    assert [h.passage_id for h in fused] == [2, 1]
    assert fused[0].score == pytest.approx(2 / 61)


def test_it_breaks_ties_deterministically():
    fused = rrf({"bm25": ranked(7), "dense": ranked(5)}, k=60)
    assert [h.passage_id for h in fused] == [5, 7]


def test_it_counts_a_passage_once_per_list():
    fused = rrf({"bm25": [RetrieverHit(1, 1, 3.0), RetrieverHit(1, 4, 1.0)]}, k=60)
    assert fused[0].score == pytest.approx(1 / 61)


def test_it_rolls_lists_up_to_a_documents_best_passage():
    source_of = {1: 100, 2: 100, 3: 200}
    lists = {"bm25": ranked(1, 2, 3, source_of=source_of)}
    docs = rollup_lists(lists)["bm25"]
    assert [(h.passage_id, h.source_id, h.rank) for h in docs] == [(1, 100, 1), (3, 200, 2)]


def test_it_fuses_documents_after_rolling_up():
    # doc 100 = passages 1, 2 ; doc 200 = passage 3 ; doc 300 = passage 4
    source_of = {1: 100, 2: 100, 3: 200, 4: 300}
    lists = {
        "bm25": ranked(3, 1, 2, source_of=source_of),  # docs: 200, 100
        "dense": ranked(2, 4, 3, source_of=source_of),  # docs: 100, 300, 200
    }
    fused = rrf_documents(lists, k=60)
    scores = {h.source_id: h.score for h in fused}
    assert scores[100] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[200] == pytest.approx(1 / 61 + 1 / 63)
    assert scores[300] == pytest.approx(1 / 62)
    assert [h.source_id for h in fused] == [100, 200, 300]
    # doc 100 is represented by its best-ranked passage across lists: 2 (dense #1)
    assert fused[0].passage_id == 2
    assert fused[0].ranks == {"bm25": 2, "dense": 1}


def test_it_rolls_fused_hits_up_keeping_order():
    source_of = {1: 100, 2: 100, 3: 200}
    fused = rrf({"bm25": ranked(2, 1, 3, source_of=source_of)}, k=60)
    assert [h.passage_id for h in rollup_hits(fused)] == [2, 3]
