"""The one sentence splitter and the chunker: exact offsets, trimmed spans, linear time."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from research.pipeline.chunking import ChunkConfig, chunk_document
from research.pipeline.extract import ExtractionError, extract
from research.pipeline.language.quantities import quantities
from research.pipeline.language.sentences import (
    _BOUNDARY,
    ABBREVIATIONS,
    split_sentences,
    trim_span,
)

SENTENCEISH = st.text(
    alphabet=st.sampled_from(list("Aab .!?\n\"')( e.g. Fig. Dr. 12,3%")), max_size=300
) | st.text(max_size=200)

_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")


def _quadratic_reference(text: str) -> list[tuple[int, int]]:
    """The splitter as it was (re-reading the sentence so far at every boundary)."""
    spans, cursor = [], 0
    for match in _BOUNDARY.finditer(text):
        found = _WORD_BEFORE.search(text[cursor : match.start() + 1])
        word = found.group(1).lower() if found else None
        if word is not None and (word in ABBREVIATIONS or len(word) == 1 or "." in word):
            continue
        spans.append((cursor, match.end()))
        cursor = match.end()
    spans.append((cursor, len(text)))
    return [t for span in spans if (t := trim_span(text, *span))]


@given(text=SENTENCEISH)
def test_it_splits_exactly_as_before_only_faster(text):
    assert split_sentences(text) == _quadratic_reference(text)


@given(text=SENTENCEISH, data=st.data())
def test_it_returns_trimmed_ordered_spans_inside_the_window(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    previous = start
    for a, b in split_sentences(text, start, end):
        assert previous <= a < b <= end
        assert text[a:b] == text[a:b].strip()
        previous = b


@given(
    text=st.text(alphabet=st.sampled_from(list("Ab. |\n#-x")), max_size=3000),
    limit=st.integers(40, 400),
)
def test_it_chunks_with_exact_trimmed_offsets_within_the_size_bound(text, limit):
    for name in ("a.txt", "a.md"):
        try:
            extracted = extract((text + "\n\nWords here.").encode(), filename=name)
        except ExtractionError:
            continue
        full = extracted.text
        drafts = chunk_document(full, extracted.blocks, ChunkConfig(max_chars=limit))
        sections = [d for d in drafts if d.kind == "section"]
        for draft in drafts:
            piece = full[draft.start : draft.end]
            assert piece and piece == piece.strip()
            if draft.kind == "chunk":
                assert draft.end - draft.start <= limit
                assert draft.parent is not None and draft.parent < len(sections)
                for a, b in draft.sentences:
                    assert draft.start <= a < b <= draft.end
                    assert full[a:b] == full[a:b].strip()


def test_it_cuts_a_table_row_longer_than_a_chunk():
    row = "| " + " | ".join(f"cell {i} with several words" for i in range(60)) + " |"
    markdown = f"# Results\n\n| a | b |\n|---|---|\n{row}\n"
    extracted = extract(markdown.encode(), filename="t.md")
    drafts = chunk_document(extracted.text, extracted.blocks, ChunkConfig(max_chars=300))
    chunks = [d for d in drafts if d.kind == "chunk"]
    assert len(chunks) > 1 and all(d.end - d.start <= 300 for d in chunks)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("text", ["A. " * 100_000, "e.g. " * 60_000, "A.B." * 50_000 + " Next."])
def test_it_splits_sentences_in_linear_time(text):
    """'A. ' * 10,000 took over 25 s with the old splitter; this is 10x that input."""
    assert split_sentences(text)


@pytest.mark.timeout(30)
def test_it_chunks_in_linear_time():
    """The chunker took 12.8 s on 'A. ' * 20,000; this is 5x that input."""
    text = "Ab. A. " * 50_000
    extracted = extract(text.encode(), filename="a.txt")
    assert chunk_document(extracted.text, extracted.blocks)


@given(text=st.text(alphabet=st.sampled_from(list("0123456789.,e% mg")), max_size=400))
def test_it_reads_only_finite_quantities(text):
    assert all(math.isfinite(q.value) for q in quantities(text))


def test_it_reads_no_infinite_quantity_from_a_long_number():
    assert all(math.isfinite(q.value) for q in quantities("1" * 310 + " mg"))
