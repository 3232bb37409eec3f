"""Per-document bounds: a document over one fails with its reason; the others are stored."""

from __future__ import annotations

import pytest

from ledger.models import Snapshot, Source
from ledger.services.ingest import DocumentBounds, DocumentInput, ingest_documents

pytestmark = pytest.mark.django_db

SENTENCE = "Vitamin D supplementation reduced falls among older adults in the trial. "


def _doc(name: str, text: str) -> DocumentInput:
    return DocumentInput(raw=text.encode(), label=name, filename=name, content_type="text/plain")


def test_it_refuses_a_document_over_the_character_bound_and_keeps_the_others():
    huge = SENTENCE * 40_000  # 2.9 M characters: refused before any chunking
    results = ingest_documents([_doc("huge.txt", huge), _doc("small.txt", SENTENCE * 3)])
    assert [r.status for r in results] == ["failed", "added"]
    assert results[0].error_reason == "too_long"
    assert "2,919,999 characters" in results[0].error  # stripped and "split it" in results[0].error
    assert Snapshot.objects.count() == 1


def test_it_refuses_a_document_over_the_passage_bound():
    bounds = DocumentBounds(max_passages=3)
    text = "\n\n".join(SENTENCE * 12 for _ in range(10))
    results = ingest_documents([_doc("long.txt", text), _doc("short.txt", SENTENCE)], bounds=bounds)
    assert results[0].status == "failed" and results[0].error_reason == "too_many_passages"
    assert results[1].status == "added"
    assert not Source.objects.filter(title="long.txt").exists()


def test_it_refuses_a_document_over_the_time_bound_with_its_copy():
    bounds = DocumentBounds(max_seconds=0.0)
    results = ingest_documents(
        [_doc("a.txt", SENTENCE * 5), _doc("copy-of-a.txt", SENTENCE * 5)], bounds=bounds
    )
    assert [(r.status, r.error_reason) for r in results] == [
        ("failed", "too_slow"),
        ("failed", "too_slow"),
    ]
    assert "nothing of it was stored" in results[0].error
    assert Source.objects.count() == 0


def test_it_reads_the_bounds_from_settings(settings):
    settings.INGEST_MAX_CHARS = 5000
    results = ingest_documents([_doc("mid.txt", SENTENCE * 100)])
    assert results[0].error_reason == "too_long"
