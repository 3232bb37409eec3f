"""The BM25 index in Postgres: sync is incremental and idempotent, statistics stay exact,
and the SQL scores equal BM25 computed by hand."""

from __future__ import annotations

import pytest
from django.db import connection

from ledger.models import Passage, SparseDocument, SparsePosting, SparseStats, SparseTerm
from ledger.services.sparse_index import bm25_sql, index_text, sparse_status, sync_sparse_index
from research.pipeline.retrieve.sparse import (
    BM25Params,
    idf,
    query_terms,
    term_frequencies,
    term_score,
)
from tests.factories import make_library, make_passage, make_snapshot

pytestmark = pytest.mark.django_db

TEXTS = {
    "p53": "TP53 mutations drive tumour growth. TP53 is a tumour suppressor gene.",
    "kras": "KRAS mutations drive pancreatic tumour growth.",
    "tea": "Green tea contains catechins and caffeine.",
}


@pytest.fixture
def passages():
    out = {}
    for key, text in TEXTS.items():
        out[key] = make_passage(make_snapshot(text, title=f"Paper about {key}"))
    return out


def search(terms, k=10, kind="chunk"):
    with connection.cursor() as cursor:
        cursor.execute(bm25_sql(BM25Params()), {"kind": kind, "terms": terms, "k": k})
        return [(pid, score) for pid, _source, score in cursor.fetchall()]


def test_it_indexes_new_passages_once(passages):
    first = sync_sparse_index()
    assert first.indexed == 3
    assert first.by_kind == {"chunk": 3}
    assert sync_sparse_index().indexed == 0
    assert SparseDocument.objects.count() == 3
    for passage in passages.values():
        stored = set(
            SparsePosting.objects.filter(document_id=passage.pk).values_list("source_id", flat=True)
        )
        assert stored == {passage.source_id}


def test_it_indexes_only_passages_added_since(passages):
    sync_sparse_index()
    extra = make_passage(make_snapshot("Coffee contains caffeine too.", title="Coffee"))
    report = sync_sparse_index()
    assert report.indexed == 1
    assert SparseDocument.objects.filter(passage=extra).exists()


def test_it_indexes_a_passage_again_when_its_text_changed(passages):
    sync_sparse_index()
    passage = passages["tea"]
    passage.text = "Black tea contains theaflavins; green tea contains catechins."
    passage.fingerprint = "changed"
    passage.save(update_fields=["text", "fingerprint"])

    assert sync_sparse_index().indexed == 1

    assert SparseTerm.objects.get(kind="chunk", term="theaflavin").df == 1
    assert [pid for pid, _ in search(query_terms("theaflavins"))] == [passage.pk]
    assert SparseDocument.objects.get(passage=passage).fingerprint == "changed"


def test_it_limits_a_sync_to_one_library(passages):
    library = make_library("oncology")
    passages["p53"].source.libraries.add(library)
    assert sync_sparse_index(library).indexed == 1
    assert list(SparseDocument.objects.values_list("passage_id", flat=True)) == [passages["p53"].pk]


def test_it_keeps_document_frequencies_and_statistics_exact(passages):
    sync_sparse_index()
    stats = SparseStats.objects.get(kind="chunk")
    lengths = [
        sum(term_frequencies(index_text(p.source.title, "", p.text)).values())
        for p in passages.values()
    ]
    assert stats.documents == 3
    assert stats.total_length == sum(lengths)
    assert SparseTerm.objects.get(kind="chunk", term="mutat").df == 2
    assert SparseTerm.objects.get(kind="chunk", term="tp53").df == 1

    Passage.objects.filter(pk=passages["kras"].pk).delete()  # cascades through the index
    stats.refresh_from_db()
    assert stats.documents == 2
    assert SparseTerm.objects.get(kind="chunk", term="mutat").df == 1
    assert not SparsePosting.objects.filter(document_id=passages["kras"].pk).exists()
    assert [s.documents for s in sparse_status()] == [2]


def test_it_scores_exactly_like_bm25_by_hand(passages):
    sync_sparse_index()
    terms = query_terms("TP53 tumour mutations")
    docs = {
        key: term_frequencies(index_text(p.source.title, "", p.text)) for key, p in passages.items()
    }
    n = len(docs)
    avgdl = sum(sum(tf.values()) for tf in docs.values()) / n
    expected = {}
    for key, tfs in docs.items():
        score = 0.0
        for term in terms:
            df = sum(1 for other in docs.values() if term in other)
            if tfs.get(term):
                score += idf(n, df) * term_score(tfs[term], sum(tfs.values()), avgdl, BM25Params())
        if score:
            expected[passages[key].pk] = score
    got = dict(search(terms))
    assert got.keys() == expected.keys()
    for pid, score in expected.items():
        assert got[pid] == pytest.approx(score, rel=1e-9)
    assert search(terms)[0][0] == passages["p53"].pk


def test_it_finds_an_exact_identifier(passages):
    variant = make_passage(make_snapshot("The TP53-R175H hotspot variant.", title="Variant"))
    sync_sparse_index()
    hits = search(query_terms("TP53-R175H"))
    assert hits[0][0] == variant.pk
