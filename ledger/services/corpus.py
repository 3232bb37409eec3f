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
from pathlib import Path
from typing import Any, Literal

from ledger.models import SourceType
from ledger.services.ingest import DocumentInput
from research.pipeline.extract import corpus_document

CorpusFormat = Literal["beir", "scifact", "folder"]
FILE_SUFFIXES = frozenset({".html", ".htm", ".pdf", ".md", ".markdown", ".txt", ".text"})


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
    if path.is_dir():
        return "folder"
    if not path.is_file():
        raise CorpusError(f"{path}: no such file or folder")
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    try:
        record = json.loads(first)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: first line is not JSON ({exc})") from exc
    if isinstance(record, dict) and "_id" in record and "text" in record:
        return "beir"
    if isinstance(record, dict) and "doc_id" in record and "abstract" in record:
        return "scifact"
    raise CorpusError(f"{path}: neither BEIR {{_id,title,text}} nor SciFact {{doc_id,abstract}}")


def scifact_body(abstract: list[str]) -> str:
    return " ".join(sentence.strip() for sentence in abstract)


def scifact_sentence_spans(title: str, abstract: list[str]) -> list[tuple[int, int]]:
    """Offsets of each SciFact sentence in the snapshot text (for gold evidence indices)."""
    offset = len(title.strip()) + 2 if title.strip() else 0
    spans = []
    for sentence in abstract:
        size = len(sentence.strip())
        spans.append((offset, offset + size))
        offset += size + 1
    return spans


def read_corpus(path: Path, name: str, source_type: str | None = None) -> Iterator[DocumentInput]:
    """Yield one document per record (or file), in file order."""
    path = corpus_path(path)
    fmt = detect_format(path)
    if fmt == "folder":
        yield from _read_folder(path)
        return
    kind = source_type or (SourceType.PAPER if fmt == "scifact" or "scifact" in name else "other")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield _record(json.loads(line), fmt, name, kind, number)


def _record(
    record: dict[str, Any], fmt: CorpusFormat, name: str, kind: str, line: int
) -> DocumentInput:
    if fmt == "beir":
        doc_id, body = str(record["_id"]), str(record.get("text") or "")
    else:
        doc_id, body = str(record["doc_id"]), scifact_body(list(record.get("abstract") or []))
    title = str(record.get("title") or "")
    extracted = corpus_document(title, body)
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
