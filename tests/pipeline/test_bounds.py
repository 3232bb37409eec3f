"""Bounds the extractor and the chunker honour while they work (issue 27)."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from research.pipeline.chunking import chunk_document
from research.pipeline.extract import (
    ExtractionError,
    TooLong,
    _answer,
    corpus_document,
    extract,
    extract_isolated,
)

SENTENCE = "Vitamin D supplementation reduced falls among older adults in the trial."
PARAGRAPHS = "\n\n".join(f"{i}. {SENTENCE}" for i in range(300))
SAMPLES = {
    "notes.txt": PARAGRAPHS.encode(),
    "notes.md": ("# Title\n\n" + PARAGRAPHS).encode(),
    "page.html": (
        "<html><body><article>"
        + "".join(f"<p>{i}. {SENTENCE}</p>" for i in range(300))
        + "</article></body></html>"
    ).encode(),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_extraction_over_max_chars_counts_the_whole_text_and_keeps_none(name):
    full = extract(SAMPLES[name], filename=name)

    with pytest.raises(TooLong) as refused:
        extract(SAMPLES[name], filename=name, max_chars=len(full.text) - 1)

    assert refused.value.reason == "too_long"
    assert refused.value.chars == len(full.text)
    assert f"{len(full.text):,} characters" in str(refused.value)
    assert extract(SAMPLES[name], filename=name, max_chars=len(full.text)) == full


def test_extraction_in_a_child_gives_the_same_record_and_the_same_refusals():
    page = SAMPLES["page.html"]

    assert extract_isolated(page, timeout_s=60, filename="page.html") == extract(
        page, filename="page.html"
    )
    with pytest.raises(TooLong) as refused:
        extract_isolated(page, timeout_s=60, filename="page.html", max_chars=100)
    assert refused.value.chars == len(extract(page, filename="page.html").text)
    with pytest.raises(ExtractionError) as latin:
        extract_isolated("caf\xe9 au lait, d\xe9j\xe0 vu".encode("latin-1"), timeout_s=60)
    assert latin.value.reason == "encoding"
    assert not multiprocessing.active_children()


def test_extraction_in_a_child_is_stopped_at_its_deadline():
    links = b"<html><body><p>Words of a paragraph.</p>" + b"<a>" * 300_000

    with pytest.raises(TimeoutError):
        extract_isolated(links, timeout_s=0.2, filename="links.html")

    assert not multiprocessing.active_children()


def test_a_child_that_dies_without_an_answer_is_a_crash():
    with pytest.raises(ExtractionError) as crashed:
        _answer(("crashed",))
    assert crashed.value.reason == "crashed"


def _parts(n: int):
    text = "\n\n".join(f"# Part {i}\n\n{SENTENCE} {SENTENCE}" for i in range(n))
    return extract(text.encode(), filename="parts.md")


def test_chunking_stops_one_passage_past_the_bound():
    doc = _parts(500)

    assert len(chunk_document(doc.text, doc.blocks)) == 1000
    assert len(chunk_document(doc.text, doc.blocks, max_passages=7)) == 8
    assert len(chunk_document(doc.text, doc.blocks, max_passages=600)) == 601


def test_chunking_within_the_bounds_is_unchanged():
    doc = corpus_document("A title.", " ".join(f"{i} {SENTENCE}" for i in range(200)))
    drafts = chunk_document(doc.text, doc.blocks)

    bounded = chunk_document(
        doc.text, doc.blocks, max_passages=len(drafts), deadline=time.monotonic() + 600
    )

    assert bounded == drafts


def test_chunking_past_its_deadline_raises():
    doc = _parts(10)

    with pytest.raises(TimeoutError):
        chunk_document(doc.text, doc.blocks, deadline=time.monotonic() - 1)
