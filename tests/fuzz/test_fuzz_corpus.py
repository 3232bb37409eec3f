"""Corpus JSONL of any shape: documents or CorpusError naming the line, never a traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ledger.services.corpus import BadLine, CorpusError, read_corpus, scifact_sentence_spans
from research.pipeline.extract import _CONTROL, corpus_document

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
BEIR = st.fixed_dictionaries(
    {"_id": st.one_of(st.text(max_size=6), st.integers(), st.none(), st.lists(st.integers()))},
    optional={"title": JSON, "text": JSON, "metadata": JSON},
)
LINE = (
    BEIR.map(json.dumps)
    | JSON.map(json.dumps)
    | st.binary(max_size=40).filter(lambda b: b"\n" not in b).map(lambda b: b.decode("latin-1"))
    | st.just('{"doc_id": 3, "abstract": ["A SciFact line."]}')
)
FIRST = json.dumps({"_id": "1", "title": "Good", "text": "A readable first document."})


@given(lines=st.lists(LINE, max_size=8))
def test_it_reads_every_line_as_a_document_or_a_numbered_bad_line(lines):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.jsonl"
        path.write_bytes(("\n".join([FIRST, *lines]) + "\n").encode("utf-8", "surrogatepass"))
        bad: list[BadLine] = []
        docs = list(read_corpus(path, "fuzz", bad_lines=bad))
        assert docs[0].canonical_id == "corpus:fuzz:1"
        assert len(docs) + len(bad) <= len(lines) + 1
        assert all(2 <= b.line <= len(lines) + 1 and b.reason for b in bad)
        try:
            strict = list(read_corpus(path, "fuzz"))
        except CorpusError as exc:
            assert str(exc).startswith(f"line {bad[0].line}:")
        else:
            assert not bad and len(strict) == len(docs)


@given(title=st.text(max_size=30), abstract=st.lists(st.text(max_size=30), max_size=6))
def test_it_places_scifact_sentence_spans_on_the_stored_text(title, abstract):
    spans = scifact_sentence_spans(title, abstract)
    assert len(spans) == len(abstract)
    try:
        text = corpus_document(title, " ".join(s.strip() for s in abstract)).text
    except Exception:
        return
    for sentence, (start, end) in zip(abstract, spans, strict=True):
        if text[start:end]:  # the sentence as stored: control characters dropped
            assert text[start:end] == _CONTROL.sub("", sentence).strip()


def test_it_keeps_spans_in_place_when_the_first_sentence_is_empty():
    abstract = ["", "Vitamin D lowered falls.", "Calcium did not."]
    text = corpus_document("Title", " ".join(s.strip() for s in abstract)).text
    spans = scifact_sentence_spans("Title", abstract)
    assert [text[a:b] for a, b in spans] == abstract
