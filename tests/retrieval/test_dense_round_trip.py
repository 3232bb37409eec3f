"""The dense search sends its HNSW settings and its statement in one round trip, and the
settings hold for that statement only."""

from __future__ import annotations

import tempfile

import pytest
from django.db import connection
from psycopg import pq

from research.pipeline.retrieve.records import RetrievalRequest
from research.retrieval import RetrievalConfig, Retriever, _vector_literal

SETTINGS = (
    "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'),"
    " current_setting('jit')"
)


def _frontend_messages(run) -> list[str]:
    """The protocol messages this connection sends to Postgres while ``run()`` runs."""
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            run()
        finally:
            pgconn.untrace()
        trace.seek(0)
        lines = trace.read().splitlines()
    return [line.split("\t")[2] for line in lines if line.startswith("F\t")]


@pytest.mark.django_db(transaction=True)
def test_it_sets_the_hnsw_settings_for_its_statement_only():
    retriever = Retriever(config=RetrievalConfig(rrf_k=60, ef_search=77))
    assert retriever._execute(SETTINGS, {}) == [("77", "relaxed_order", "off")]
    with connection.cursor() as cursor:  # the next statement is back to the defaults
        cursor.execute("SELECT current_setting('hnsw.ef_search', true), current_setting('jit')")
        ef_search, jit = cursor.fetchone()
    assert ef_search != "77"
    assert jit == "on"


@pytest.mark.django_db(transaction=True)
def test_it_searches_in_one_round_trip_with_the_same_hits(corpus):
    retriever = Retriever(config=RetrievalConfig(rrf_k=60, ef_search=100))
    request = RetrievalRequest(text="cats nap a lot", mode="dense", limit=5)
    texts = [request.text]
    vectors = retriever._encode(texts)
    specs = retriever._specs(request, 1)
    found: dict[str, object] = {}
    sent = _frontend_messages(
        lambda: found.update(retriever._search(specs, texts, vectors, request))
    )
    assert sent == ["Query"]  # no BEGIN, SET or COMMIT of their own
    by_id = {p.pk: key for key, p in corpus.items()}
    [dense] = found.values()
    assert by_id[dense[0].passage_id] == "felines"  # type: ignore[index]

    # The same lists as the statement run the old way, in a transaction after its SETs.
    with connection.cursor() as cursor:
        cursor.execute("BEGIN")
        cursor.execute("SET LOCAL hnsw.ef_search = 100")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "SELECT id FROM ledger_passage WHERE embedding IS NOT NULL AND kind = 'chunk'"
            " ORDER BY embedding <=> %s::vector LIMIT %s",
            [_vector_literal(vectors[0]), request.candidates],
        )
        expected = [row[0] for row in cursor.fetchall()]
        cursor.execute("COMMIT")
    assert [hit.passage_id for hit in dense] == expected  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_it_keeps_the_settings_inside_a_callers_transaction():
    retriever = Retriever(config=RetrievalConfig(rrf_k=60, ef_search=64))
    assert retriever._execute(SETTINGS, {}) == [("64", "relaxed_order", "off")]
