"""BM25 filtered after ranking returns exactly what filtering every posting returns."""

from __future__ import annotations

import random

import pytest
from django.db import connection

from ledger.services.sparse_index import bm25_sql, bm25_top_k, sync_sparse_index
from research.pipeline.retrieve.records import Filters
from research.pipeline.retrieve.sparse import BM25Params, query_terms
from research.retrieval import filter_sql
from tests.factories import make_library, make_passage, make_snapshot

pytestmark = pytest.mark.django_db

TOPIC = [
    *("vitamin", "D", "supplementation", "fracture", "falls", "older", "adults", "hip"),
    *("bone", "density", "calcium", "randomized", "trial", "placebo", "cholecalciferol"),
    *("dose", "annual", "women", "men", "risk", "reduction"),
]
OTHER = [
    *("caffeine", "sleep", "latency", "coffee", "tea", "catechin", "insomnia", "melatonin"),
    *("night", "shift", "workers", "cognitive", "performance", "alertness", "dose", "hours"),
    *("bedtime", "trial"),
]
QUERIES = [
    "Does vitamin D supplementation reduce hip fracture risk in older adults?",
    "High-dose cholecalciferol and falls in women",
    "caffeine dose and sleep latency trial",
    "calcium plus vitamin D and bone density",
]


def _text(rng: random.Random, words: list[str], n: int) -> str:
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."


@pytest.fixture
def libraries():
    """'bones': 6 passages on the topic; 'sleep': 40 others, 10 of them on the topic too."""
    rng = random.Random(18)
    bones, sleep = make_library("bones"), make_library("sleep")
    for i in range(46):
        on_topic = i < 6 or i >= 36
        words = TOPIC if on_topic else OTHER
        text = _text(rng, words, rng.randint(12, 40))
        passage = make_passage(make_snapshot(text, title=f"Study {i}"))
        passage.source.libraries.add(bones if i < 6 else sleep)
    sync_sparse_index()
    return bones, sleep


def _scan(terms, k, condition="", params=None):
    with connection.cursor() as cursor:
        sql = bm25_sql(BM25Params(), condition=condition)
        cursor.execute(sql, {**(params or {}), "kind": "chunk", "terms": terms, "k": k})
        return [(pid, sid, score) for pid, sid, score in cursor.fetchall()]


def _same(got, expected):
    assert [(p, s) for p, s, _ in got] == [(p, s) for p, s, _ in expected]
    assert [x for _, _, x in got] == pytest.approx([x for _, _, x in expected], rel=1e-12)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("library", ["bones", "sleep"])
def test_it_ranks_a_library_like_a_scan_filtered_posting_by_posting(libraries, query, library):
    chosen = {lib.name: lib for lib in libraries}[library]
    filters = Filters(library_ids=(chosen.pk,))
    condition, params = filter_sql(filters, "p.source_id")
    scan_condition, _ = filter_sql(filters, "p.source_id", hashed=True)
    terms = query_terms(query)

    got = bm25_top_k(
        "chunk", terms, 5, condition=condition, scan_condition=scan_condition, params=params
    )

    _same(got, _scan(terms, 5, scan_condition, params))


def test_it_falls_back_to_the_filtered_scan_for_a_narrow_library(libraries):
    bones, _ = libraries
    condition, params = filter_sql(Filters(library_ids=(bones.pk,)), "p.source_id")
    terms = query_terms(QUERIES[0])
    unfiltered = _scan(terms, 2 * 3)
    assert sum(1 for _, sid, _ in unfiltered if sid in _sources(bones)) < 3  # a narrow filter

    got = bm25_top_k("chunk", terms, 3, condition=condition, params=params)

    assert len(got) == 3 and {sid for _, sid, _ in got} <= _sources(bones)
    _same(got, _scan(terms, 3, condition, params))


def test_it_ranks_the_whole_index_without_a_filter(libraries):
    terms = query_terms(QUERIES[1])

    _same(bm25_top_k("chunk", terms, 8), _scan(terms, 8))
    assert bm25_top_k("chunk", [], 8) == []


def _sources(library):
    return set(library.sources.values_list("pk", flat=True))
