"""The BM25 analyzer and formula (pure)."""

from __future__ import annotations

import math

import pytest

from research.pipeline.retrieve.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k
from research.pipeline.retrieve.sparse import BM25Params, analyze, idf, query_terms, term_score


def test_it_stems_and_drops_stop_words():
    assert analyze("The mutations of the genes") == ["mutat", "gene"]


def test_it_keeps_identifiers_whole_as_well_as_their_parts():
    terms = analyze("TP53-R175H in release v2.13.1")
    assert "tp53-r175h" in terms and "v2.13.1" in terms
    assert "tp53" in terms and "r175h" in terms


def test_it_counts_a_repeated_query_word_once():
    assert query_terms("cancer cancer cells") == ["cancer", "cell"]


def test_it_computes_lucene_bm25_by_hand():
    assert idf(100, 10) == pytest.approx(math.log(1 + 90.5 / 10.5))
    p = BM25Params(k1=1.5, b=0.75)
    # tf=2, dl=avgdl: 2 * 2.5 / (2 + 1.5) = 1.428571
    assert term_score(2, 50, 50.0, p) == pytest.approx(5 / 3.5)
    # longer documents are penalised
    assert term_score(2, 100, 50.0, p) < term_score(2, 50, 50.0, p)


def test_it_scores_rankings():
    qrels = {"d1": 1, "d2": 1}
    assert ndcg_at_k(["d1", "d2", "x"], qrels) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "d1"], {"d1": 1}) == pytest.approx(1 / math.log2(3))
    assert recall_at_k(["d1", "x"], qrels, 100) == 0.5
    assert mrr_at_k(["x", "y", "d2"], qrels) == pytest.approx(1 / 3)
    assert percentile([1, 2, 3, 4], 50) == 2.5
