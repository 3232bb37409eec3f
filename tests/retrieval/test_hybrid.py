"""The production path: what only BM25 finds and what only dense finds, hybrid finds both."""

from __future__ import annotations

import datetime as dt

import pytest

from ledger.models import Library
from research.pipeline.retrieve.records import DiversityConfig, Filters, RetrievalRequest
from research.retrieval import RetrievalConfig, Retriever

pytestmark = pytest.mark.django_db


@pytest.fixture
def retriever():
    return Retriever(config=RetrievalConfig(rrf_k=60, ef_search=100))


def keys(result, corpus):
    by_id = {p.pk: key for key, p in corpus.items()}
    return [by_id[h.passage_id] for h in result.hits]


def ask(retriever, text, mode="hybrid", **kwargs):
    return retriever.retrieve(RetrievalRequest(text=text, mode=mode, limit=5, **kwargs))


def test_it_answers_an_exact_identifier_only_bm25_ranks_first(retriever, corpus):
    dense = keys(ask(retriever, "TP53-R175H", "dense"), corpus)
    bm25 = keys(ask(retriever, "TP53-R175H", "bm25"), corpus)
    hybrid = ask(retriever, "TP53-R175H")
    assert dense[0] != "r175h"  # the encoder prefers the passages about TP53 variants
    assert bm25[0] == "r175h"
    assert keys(hybrid, corpus)[0] == "r175h"
    top = hybrid.hits[0]
    assert top.ranks["bm25"] == 1 and top.ranks["dense"] == dense.index("r175h") + 1
    assert set(top.scores) == {"bm25", "dense"}


def test_it_answers_a_version_number(retriever, corpus):
    """Dense cannot tell v2.13.1 from v2.13.0 / v2.13.2: its two changelog passages score
    within a hair of each other (which of them comes first is quantization noise and
    differs between CPUs); BM25 matches the exact version, and hybrid ranks it first."""
    dense = ask(retriever, "v2.13.1", "dense")
    score = {
        key: hit.scores["dense"] for key, hit in zip(keys(dense, corpus), dense.hits, strict=True)
    }
    assert abs(score["release"] - score["release2"]) < 0.02
    assert keys(ask(retriever, "v2.13.1", "bm25"), corpus)[0] == "release"
    assert keys(ask(retriever, "v2.13.1"), corpus)[0] == "release"


def test_it_answers_a_paraphrase_only_dense_can_find(retriever, corpus):
    bm25 = ask(retriever, "cats nap a lot", "bm25")
    assert "felines" not in keys(bm25, corpus)  # no shared word
    hybrid = ask(retriever, "cats nap a lot")
    assert keys(hybrid, corpus)[0] == "felines"
    assert "bm25" not in hybrid.hits[0].ranks


def test_it_fills_passage_and_source_fields(retriever, corpus):
    hit = ask(retriever, "green tea catechins").hits[0]
    passage = corpus["tea"]
    assert hit.passage_id == passage.pk
    assert hit.text == passage.snapshot.text[hit.start : hit.end]
    assert hit.canonical_id == "corpus:fixture:tea"
    assert hit.metadata["doc_id"] == "tea"
    assert hit.snapshot_id == passage.snapshot_id


def test_it_filters_by_source_type_date_and_library(retriever, corpus):
    only_docs = ask(retriever, "TP53 variant", filters=Filters(source_types=("documentation",)))
    assert set(keys(only_docs, corpus)) <= {"release", "release2"}
    recent = ask(
        retriever,
        "TP53 variants p53",
        filters=Filters(published_after=dt.date(2019, 1, 1), published_before=dt.date(2022, 1, 1)),
    )
    assert "contact" not in keys(recent, corpus) and "guardian" not in keys(recent, corpus)
    assert "r175h" in keys(recent, corpus)
    empty = Library.objects.create(name="empty")
    assert ask(retriever, "TP53", filters=Filters(library_ids=(empty.pk,))).hits == []
    fixture = Library.objects.get(name="fixture")
    assert ask(retriever, "TP53", filters=Filters(library_ids=(fixture.pk,))).hits


def test_it_rolls_up_to_documents(retriever, corpus):
    result = ask(retriever, "TP53 hotspot variants", level="document")
    sources = [h.source_id for h in result.hits]
    assert len(sources) == len(set(sources))


def test_it_diversifies_with_caps(retriever, corpus):
    cfg = DiversityConfig(mmr_lambda=0.5, per_source=1, per_cluster=1)
    result = ask(retriever, "TP53 variants", diversity=cfg)
    assert len({h.source_id for h in result.hits}) == len(result.hits)
    assert all(h.embedding is not None for h in result.hits)


def test_it_records_timings_and_counts(retriever, corpus):
    result = ask(retriever, "TP53")
    assert {"encode_ms", "search_ms", "load_ms", "total_ms"} <= set(result.timings_ms)
    assert result.counters["bm25_hits"] >= 3
