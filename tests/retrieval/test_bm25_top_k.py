"""BM25 over packed postings returns exactly what the SQL scan over posting rows returns:
packed or not, after inserts, deletes and re-indexing, with a library filter or without."""

from __future__ import annotations

import random

import numpy as np
import pytest
from django.db import connection

from ledger.models import Passage, SparseBlock, SparseDelta, SparseGone, SparseTerm
from ledger.services.sparse_index import (
    PACK_MIN,
    bm25_scores,
    bm25_sql,
    bm25_top_k,
    pack_postings,
    pack_sparse_index,
    sync_sparse_index,
    unpack_postings,
)
from research.pipeline.retrieve.records import Filters
from research.pipeline.retrieve.sparse import BM25Params, query_terms
from research.retrieval import filter_sql
from tests.factories import make_library, make_passage, make_snapshot, sha256

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


def _add(rng: random.Random, library, words: list[str], i: int) -> Passage:
    text = _text(rng, words, rng.randint(12, 40))
    passage = make_passage(make_snapshot(text, title=f"Study {i}"))
    passage.source.libraries.add(library)
    return passage


@pytest.fixture
def libraries():
    """'bones': 6 passages on the topic; 'sleep': 40 others, 10 of them on the topic too."""
    rng = random.Random(18)
    bones, sleep = make_library("bones"), make_library("sleep")
    for i in range(46):
        on_topic = i < 6 or i >= 36
        _add(rng, bones if i < 6 else sleep, TOPIC if on_topic else OTHER, i)
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


def _pack_state(state: str, rng: random.Random, libraries) -> None:
    """'delta': nothing packed; 'packed': all folded; 'mixed': folded, then written to."""
    if state == "delta":
        return
    pack_sparse_index(due_only=False)
    if state == "mixed":
        _, sleep = libraries
        for i in range(100, 108):
            _add(rng, sleep, TOPIC if i % 2 else OTHER, i)
        Passage.objects.filter(
            pk__in=list(Passage.objects.order_by("pk").values_list("pk", flat=True)[3:9])
        ).delete()
        sync_sparse_index(pack=False)
        assert SparseGone.objects.exists()


@pytest.mark.parametrize("state", ["delta", "packed", "mixed"])
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("library", ["bones", "sleep"])
def test_it_ranks_a_library_like_a_scan_filtered_posting_by_posting(
    libraries, query, library, state
):
    _pack_state(state, random.Random(7), libraries)
    chosen = {lib.name: lib for lib in libraries}[library]
    filters = Filters(library_ids=(chosen.pk,))
    condition, params = filter_sql(filters, "p.source_id")
    scan_condition, _ = filter_sql(filters, "p.source_id", hashed=True)
    terms = query_terms(query)

    got = bm25_top_k("chunk", terms, 5, condition=condition, params=params)

    _same(got, _scan(terms, 5, scan_condition, params))


def test_it_finds_the_best_of_a_narrow_library_below_the_others(libraries):
    bones, _ = libraries
    condition, params = filter_sql(Filters(library_ids=(bones.pk,)), "p.source_id")
    terms = query_terms(QUERIES[0])
    unfiltered = _scan(terms, 2 * 3)
    assert sum(1 for _, sid, _ in unfiltered if sid in _sources(bones)) < 3  # a narrow filter

    got = bm25_top_k("chunk", terms, 3, condition=condition, params=params)

    assert len(got) == 3 and {sid for _, sid, _ in got} <= _sources(bones)
    _same(got, _scan(terms, 3, condition, params))


@pytest.mark.parametrize("state", ["delta", "packed", "mixed"])
def test_it_ranks_the_whole_index_without_a_filter(libraries, state):
    _pack_state(state, random.Random(8), libraries)
    for query in QUERIES:
        terms = query_terms(query)
        _same(bm25_top_k("chunk", terms, 8), _scan(terms, 8))
        _same(bm25_top_k("chunk", terms, 500), _scan(terms, 500))  # every passage it matches
    assert bm25_top_k("chunk", [], 8) == []
    assert bm25_top_k("chunk", ["nosuchterm"], 8) == []


def test_it_stays_exact_through_random_writes_and_folds(libraries):
    """Seeded random inserts, deletes, re-indexed edits and folds; the scan after each."""
    rng = random.Random(1813)
    _, sleep = libraries
    actions = ["insert", "delete", "edit", "fold", "fold-due"] * 3
    rng.shuffle(actions)
    pack_sparse_index(due_only=False)
    seen_delta = False
    for step, action in enumerate(actions):
        if action == "insert":
            for i in range(rng.randint(1, 6)):
                _add(rng, sleep, rng.choice([TOPIC, OTHER]), 1000 + 10 * step + i)
        elif action == "delete":
            ids = list(Passage.objects.values_list("pk", flat=True))
            Passage.objects.filter(pk__in=rng.sample(ids, min(3, len(ids)))).delete()
        elif action == "edit":  # the same passage, new text: re-indexed under its id
            passage = rng.choice(list(Passage.objects.all()))
            passage.text = _text(rng, rng.choice([TOPIC, OTHER]), rng.randint(5, 30))
            passage.fingerprint = sha256(passage.text)
            passage.save(update_fields=["text", "fingerprint"])
        elif action == "fold":
            pack_sparse_index(due_only=False)
        else:
            pack_sparse_index()
        sync_sparse_index(pack=False)
        seen_delta = seen_delta or SparseDelta.objects.exists()
        for query in QUERIES:
            terms = query_terms(query)
            _same(bm25_top_k("chunk", terms, 10), _scan(terms, 10))
        _assert_packed_form_equals_postings()
    assert seen_delta  # an edited passage, indexed again under a packed id


def test_it_folds_only_terms_with_enough_pending_postings(libraries):
    terms = SparseTerm.objects.filter(kind="chunk")
    common = set(terms.filter(df__gte=PACK_MIN).values_list("term", flat=True))
    assert common and common != set(terms.values_list("term", flat=True))
    assert set(SparseBlock.objects.values_list("term", flat=True)) == common
    assert set(terms.filter(packed_through=0).values_list("term", flat=True)) == set(
        terms.exclude(term__in=common).values_list("term", flat=True)
    )
    report = pack_sparse_index(due_only=False)
    assert report.terms == len(terms) - len(common)
    assert set(SparseTerm.objects.values_list("pending", flat=True)) == {0}
    assert not SparseTerm.objects.filter(packed_through=0).exists()
    _assert_packed_form_equals_postings()


def test_it_packs_every_pending_term_from_the_command(libraries):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("packpostings", all=True, stdout=out)

    unpacked = SparseTerm.objects.filter(df__lt=PACK_MIN).count()  # sync folded the rest
    assert out.getvalue().startswith(f"packed {unpacked} terms")
    assert not SparseTerm.objects.filter(pending__gt=0).exists()
    _assert_packed_form_equals_postings()


def test_the_command_indexes_passages_the_bm25_index_misses(libraries):
    """An upgraded database holds passages stored before the index existed: the command
    indexes them, so BM25 finds them, before packing."""
    from io import StringIO

    from django.core.management import call_command

    bones, _ = libraries
    late = _add(random.Random(7), bones, TOPIC, 99)  # stored, never indexed
    terms = query_terms(" ".join(TOPIC))
    assert late.pk not in {pid for pid, _, _ in _scan(terms, 100)}

    out = StringIO()
    call_command("packpostings", all=True, stdout=out)

    assert out.getvalue().startswith("indexed 1 passages missing from the BM25 index")
    assert late.pk in {pid for pid, _, _ in _scan(terms, 100)}
    _assert_packed_form_equals_postings()


@pytest.mark.parametrize(
    ("ids", "tf", "dl", "width"),
    [
        ([5, 3, 900], [1, 2, 3], [40, 50, 60], 8),
        ([7, 2**33], [1, 1], [10, 10], 16),  # a gap beyond uint32
        ([1, 2], [70_000, 1], [80_000, 3], 16),  # tf and dl beyond uint16
        ([], [], [], 0),
    ],
)
def test_it_packs_postings_and_reads_them_back(ids, tf, dl, width):
    data = pack_postings(np.array(ids, dtype=np.int64), np.array(tf), np.array(dl))
    assert len(data) == 16 + width * len(ids)
    got = unpack_postings(data)
    order = np.argsort(ids, kind="stable")
    for column, expected in zip(got, (ids, tf, dl), strict=True):
        assert column.tolist() == np.array(expected, dtype=np.int64)[order].tolist()


def test_it_scores_every_matching_passage_once(libraries):
    terms = query_terms(QUERIES[3])
    ids, scores = bm25_scores("chunk", terms)
    expected = _scan(terms, 10_000)
    assert ids.tolist() == sorted(pid for pid, _, _ in expected)
    by_id = {pid: score for pid, _, score in expected}
    assert scores.tolist() == pytest.approx([by_id[i] for i in ids.tolist()], rel=1e-12)


def _assert_packed_form_equals_postings():
    """For every term: (block - gone) + delta holds exactly the posting rows."""
    from ledger.services.sparse_index import _FOLD_PACKED, _fetch_binary, _live

    with connection.cursor() as cursor:
        cursor.execute("SELECT term, passage_id, tf, dl FROM ledger_sparseposting")
        rows: dict[str, set[tuple[int, int, int]]] = {}
        for term, pid, tf, dl in cursor.fetchall():
            rows.setdefault(term, set()).add((pid, tf, dl))
        cursor.execute("SELECT term FROM ledger_sparseterm WHERE kind = 'chunk'")
        terms = [row[0] for row in cursor.fetchall()]
    for term, df, block, above, delta, gone in _fetch_binary(
        _FOLD_PACKED, {"kind": "chunk", "terms": terms}
    ):
        ids, tf, dl = _live(block, above, delta, gone)
        live = set(zip(ids.tolist(), tf.tolist(), dl.tolist(), strict=True))
        assert len(live) == len(ids) == df
        assert live == rows.get(term, set()), term


def _sources(library):
    return set(library.sources.values_list("pk", flat=True))
