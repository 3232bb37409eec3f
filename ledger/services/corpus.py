"""Reading corpora into ``DocumentInput`` records: BEIR / SciFact ``corpus.jsonl`` and folders.

Conventions other stages rely on: a corpus document becomes the Source
``corpus:<corpus name>:<doc id>`` with metadata ``{"corpus": name, "doc_id": id}``; its
snapshot text is ``title + "\\n\\n" + body``, where a SciFact body is its sentences
(stripped) joined by single spaces — exactly the BEIR text of the same document, so both
formats map to the same Sources and Snapshots.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ledger.models import SourceType
from ledger.services.ingest import DocumentInput
from research.pipeline.extract import _CONTROL, ExtractionError, corpus_document

CorpusFormat = Literal["beir", "scifact", "folder"]
# What the upload page takes (reStructuredText included: PEPs, Sphinx docs).
FILE_SUFFIXES = frozenset(
    {".html", ".htm", ".pdf", ".md", ".markdown", ".rst", ".rest", ".txt", ".text"}
)


class CorpusError(ValueError):
    """The path is not a folder of documents or a recognised corpus.jsonl."""


def default_corpus_name(path: Path) -> str:
    """``…/scifact-beir/corpus.jsonl`` and ``…/scifact/corpus.jsonl`` are both "scifact"."""
    base = path.parent.name if path.is_file() else path.name
    return base.removesuffix("-beir").removesuffix("_beir") or "corpus"


def corpus_path(path: Path) -> Path:
    """A BEIR directory stands for its ``corpus.jsonl``."""
    if path.is_dir() and (path / "corpus.jsonl").is_file():
        return path / "corpus.jsonl"
    return path


def detect_format(path: Path) -> CorpusFormat:
    """The format of a folder or a corpus.jsonl, from its first non-blank record."""
    if path.is_dir():
        return "folder"
    if not path.is_file():
        raise CorpusError(f"{path}: no such file or folder")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                return _format_of(_parse_line(raw, number), f"{path}: line {number}")
    raise CorpusError(f"{path}: the file holds no records")


def _format_of(record: Any, where: str) -> Literal["beir", "scifact"]:
    if isinstance(record, dict) and "_id" in record and "text" in record:
        return "beir"
    if isinstance(record, dict) and "doc_id" in record and "abstract" in record:
        return "scifact"
    raise CorpusError(f"{where}: neither BEIR {{_id,title,text}} nor SciFact {{doc_id,abstract}}")


def _parse_line(raw: bytes, number: int) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorpusError(f"line {number}: not UTF-8 at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise CorpusError(f"line {number}: not JSON ({exc.msg} at column {exc.colno})") from exc
    except RecursionError as exc:
        raise CorpusError(f"line {number}: JSON nested too deeply") from exc


def scifact_body(abstract: list[str]) -> str:
    return " ".join(sentence.strip() for sentence in abstract)


def scifact_sentence_spans(title: str, abstract: list[str]) -> list[tuple[int, int]]:
    """Offsets of each SciFact sentence in the snapshot text (for gold evidence indices).

    Found in the text the import really stores (``corpus_document``), so an empty
    sentence, surrounding spaces or dropped control characters cannot shift the spans
    of the sentences after them; an empty sentence gets an empty span where it stood.
    """
    try:
        text = corpus_document(title, scifact_body(abstract)).text
    except ExtractionError:
        return [(0, 0) for _ in abstract]
    stripped_title = title.strip()
    cursor = len(stripped_title) + 2 if stripped_title else 0
    spans = []
    for sentence in abstract:
        piece = _CONTROL.sub("", sentence).strip()
        at = text.find(piece, cursor) if piece else -1
        start = at if at >= 0 else min(cursor, len(text))
        spans.append((start, start + len(piece) if at >= 0 else start))
        cursor = spans[-1][1]
    return spans


@dataclass(frozen=True)
class BadLine:
    """A corpus line that could not become a document, and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


def read_corpus(
    path: Path,
    name: str,
    source_type: str | None = None,
    bad_lines: list[BadLine] | None = None,
) -> Iterator[DocumentInput]:
    """Yield one document per record (or file), in file order.

    A line that is not a record of the corpus's format raises :class:`CorpusError`
    naming its line number, or, when ``bad_lines`` is given, is appended to it and
    skipped so the rest of the corpus is still read.
    """
    path = corpus_path(path)
    fmt = detect_format(path)
    if fmt == "folder":
        yield from _read_folder(path)
        return
    kind = source_type or (SourceType.PAPER if fmt == "scifact" else "other")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield _record(_parse_line(raw, number), fmt, name, kind, number)
            except CorpusError as exc:
                if bad_lines is None:
                    raise
                bad_lines.append(BadLine(number, str(exc).removeprefix(f"line {number}: ")))


def _record(record: Any, fmt: CorpusFormat, name: str, kind: str, line: int) -> DocumentInput:
    doc_id, title, body = _fields(record, fmt, line)
    try:
        extracted = corpus_document(title, body)
    except ExtractionError as exc:
        raise CorpusError(f"line {line}: document {doc_id!r}: {exc}") from exc
    metadata: dict[str, Any] = {"corpus": name, "doc_id": doc_id}
    if fmt == "beir" and record.get("metadata"):
        metadata["beir_metadata"] = record["metadata"]
    return DocumentInput(
        raw=extracted.text.encode("utf-8"),
        label=f"{name}:{doc_id}",
        canonical_id=f"corpus:{name}:{doc_id}",
        content_type="text/plain; charset=utf-8",
        title=extracted.title,
        source_type=kind,
        metadata=metadata,
        extracted=extracted,
    )


def _fields(record: Any, fmt: CorpusFormat, line: int) -> tuple[str, str, str]:
    """(doc id, title, body) of a record, or CorpusError saying what is wrong with it."""
    where = f"line {line}"
    if _format_of(record, where) != fmt:
        raise CorpusError(f"{where}: a {_format_of(record, where)} record in a {fmt} corpus")
    key = "_id" if fmt == "beir" else "doc_id"
    doc_id = record[key]
    if not isinstance(doc_id, str | int) or isinstance(doc_id, bool) or str(doc_id) == "":
        raise CorpusError(f"{where}: {key} must be a non-empty string or number")
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise CorpusError(f"{where}: title must be a string")
    if fmt == "beir":
        body = record.get("text") or ""
        if not isinstance(body, str):
            raise CorpusError(f"{where}: text must be a string")
        if record.get("metadata") is not None and not isinstance(record["metadata"], dict):
            raise CorpusError(f"{where}: metadata must be an object")
    else:
        abstract = record.get("abstract") or []
        if not isinstance(abstract, list) or not all(isinstance(s, str) for s in abstract):
            raise CorpusError(f"{where}: abstract must be a list of sentences (strings)")
        body = scifact_body(abstract)
    return str(doc_id), title, body


def _read_folder(folder: Path) -> Iterator[DocumentInput]:
    for file in sorted(folder.rglob("*")):
        if file.is_file() and file.suffix.lower() in FILE_SUFFIXES:
            relative = str(file.relative_to(folder))
            yield DocumentInput(
                raw=file.read_bytes(),
                label=relative,
                filename=file.name,
                content_type=mimetypes.guess_type(file.name)[0] or "",
                source_type=SourceType.FILE,
                metadata={"path": relative},
            )
