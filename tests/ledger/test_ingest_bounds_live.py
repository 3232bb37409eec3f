"""Bounds held while a document is worked on (issue 27): a hostile file is stopped at the
bound, in a child process that is gone afterwards, and the next document is stored.

No timing assertion: what is checked is who did the work and that it was stopped
(``bench_ingest_bounds`` measures the seconds and the memory).
"""

from __future__ import annotations

import logging
import multiprocessing
import os

import pytest

from ledger.models import Snapshot, Source
from ledger.services import ingest
from ledger.services.ingest import DocumentBounds, DocumentInput, ingest_documents
from research.pipeline.extract import extract

pytestmark = pytest.mark.django_db

SENTENCE = "Vitamin D supplementation reduced falls among older adults in the trial. "


def _small(name: str) -> DocumentInput:
    return DocumentInput(raw=(SENTENCE * 3).encode(), label=name, filename=name)


def _links_html(size: int) -> DocumentInput:
    """Unclosed ``<a>`` tags: minutes of parsing per few MB, far over a 1 s bound at 1 MB."""
    head = b"<html><body><p>Some words in a paragraph about nothing at all.</p>"
    raw = head + b"<a>" * ((size - len(head)) // 3)
    return DocumentInput(raw=raw, label="links.html", filename="links.html")


@pytest.fixture
def in_process_extractions(monkeypatch):
    """The sizes of the files ``ingest`` extracted in this process (not in a child)."""
    sizes: list[int] = []

    def spy(data: bytes, **options):
        sizes.append(len(data))
        return extract(data, **options)

    monkeypatch.setattr(ingest, "extract", spy)
    return sizes


def test_a_slow_html_file_is_stopped_at_the_bound_and_the_next_document_is_stored(
    caplog, in_process_extractions
):
    bounds = DocumentBounds(max_seconds=1.0)
    caplog.set_level(logging.WARNING, logger="research.pipeline.extract")

    results = ingest_documents([_links_html(1_000_000), _small("next.txt")], bounds=bounds)

    assert [(r.status, r.error_reason) for r in results] == [
        ("failed", "too_slow"),
        ("added", ""),
    ]
    assert "stopped at 1 s" in results[0].error and "nothing of it was stored" in results[0].error
    assert in_process_extractions == [len(SENTENCE * 3)]  # the HTML never ran in the worker
    killed = [r for r in caplog.records if "killed" in r.getMessage()]
    assert len(killed) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(int(killed[0].args[0]), 0)
    assert not multiprocessing.active_children()
    assert list(Source.objects.values_list("title", flat=True)) == ["next.txt"]


def test_a_long_text_file_is_refused_by_its_length_outside_the_worker(in_process_extractions):
    bounds = DocumentBounds(max_chars=100_000)
    text = SENTENCE * 40_000  # 2.9 MB: its length is counted in the child, its text not kept
    big = DocumentInput(raw=text.encode(), label="big.txt", filename="big.txt")

    results = ingest_documents([big, _small("next.txt")], bounds=bounds)

    assert [(r.status, r.error_reason) for r in results] == [
        ("failed", "too_long"),
        ("added", ""),
    ]
    assert f"{len(text.strip()):,} characters" in results[0].error
    assert "over the 100,000" in results[0].error
    assert in_process_extractions == [len(SENTENCE * 3)]
    assert not multiprocessing.active_children()
    assert Snapshot.objects.count() == 1


def test_a_large_file_within_the_bounds_is_stored_as_if_extracted_here(
    in_process_extractions, monkeypatch
):
    monkeypatch.setattr(ingest, "ISOLATE_FROM_BYTES", 1000)  # few passages to embed
    paragraphs = "\n\n".join(f"Paragraph {i}. {SENTENCE}" for i in range(40))
    doc = DocumentInput(raw=paragraphs.encode(), label="large.txt", filename="large.txt")

    results = ingest_documents([doc])

    assert results[0].status == "added" and results[0].passages > 0
    assert in_process_extractions == []
    snapshot = Snapshot.objects.get()
    assert snapshot.text == extract(doc.raw, filename="large.txt").text


def test_chunking_stops_past_the_passage_bound():
    bounds = DocumentBounds(max_passages=3)
    text = "\n\n".join(f"# Part {i}\n\n{SENTENCE}" for i in range(2000))
    doc = DocumentInput(raw=text.encode(), label="parts.md", filename="parts.md")

    results = ingest_documents([doc, _small("next.txt")], bounds=bounds)

    assert results[0].error_reason == "too_many_passages"
    assert "more than 3 passages" in results[0].error
    assert results[1].status == "added"
