"""The indexes the retrieval path depends on are really used by Postgres."""

from __future__ import annotations

import random

import pytest
from django.db import connection

from tests.factories import make_passage, make_snapshot

pytestmark = pytest.mark.django_db


def _explain(sql: str, params: list[str]) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def _vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(384)]


def test_it_answers_nearest_neighbours_through_the_hnsw_index():
    rng = random.Random(7)
    snapshot = make_snapshot("x" * 400)
    for i in range(40):
        passage = make_passage(snapshot, i * 10, i * 10 + 10)
        passage.embedding = _vector(rng)
        passage.save(update_fields=["embedding"])
    probe = str(_vector(rng))
    plan = _explain(
        "SELECT id FROM ledger_passage ORDER BY embedding <=> %s::vector LIMIT 5", [probe]
    )
    assert "passage_embedding_hnsw" in plan
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM ledger_passage ORDER BY embedding <=> %s::vector LIMIT 5", [probe]
        )
        assert len(cursor.fetchall()) == 5


def test_it_has_the_extensions_installed():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extname FROM pg_extension")
        names = {row[0] for row in cursor.fetchall()}
    assert {"vector", "pg_trgm"} <= names
