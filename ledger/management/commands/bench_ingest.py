"""``bench_ingest --beir DIR [--limit N] [--json OUT]``: ingest throughput against the bare encoder.

Two measurements in one command, back to back, on the same documents:

- **ingest**: the corpus goes through the production ingest path into a fresh scratch
  database (created and migrated before the clock starts, dropped afterwards), so every
  document is really parsed, chunked, hashed, embedded, written and indexed (BM25 too);
- **bare encoder**: ``SentenceTransformer.encode`` of the same documents as one text each
  (title + " " + text, batch 32, exact weights) — what ingest would cost if it did nothing
  but run the model once per document. It runs before and after the ingest, and the ratio
  uses their mean, so a change of machine load during the command shows in the two figures.

Both models are loaded and warmed up before any clock starts, as in a long-running worker.
``embed_share`` is the fraction of ingest wall time spent inside ``Embedder.encode`` (the
encoder has its own thread, so the share approaches 1 when it never waits for the writer).
The load average is printed at the start and the end (the machine is shared).
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from ledger.services.corpus import CorpusError, corpus_path, default_corpus_name, read_corpus
from ledger.services.ingest import IngestTimings, summarize
from ledger.services.library import do_import_corpus

SCRATCH_DB = "bench_ingest_scratch"
FIRST_KEYS = ("docs_per_s", "passages_per_s", "embed_share", "encode_docs_per_s", "ratio")


class _TimedEmbedder:
    """Wraps the real embedder and adds up the seconds spent inside ``encode``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.label = inner.label
        self.seconds = 0.0
        self.texts = 0
        self.tokens = 0

    def encode(self, texts: list[str]) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.encode(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)


class Command(BaseCommand):
    help = "Measure ingestion throughput of a BEIR corpus against the bare encoder."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--beir", required=True, type=Path, help="BEIR folder or corpus.jsonl")
        parser.add_argument("--limit", type=int, default=0, help="First N documents only")
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument(
            "--no-reference", action="store_true", help="skip the bare encoder measurement"
        )
        parser.add_argument("--json", type=Path, default=None, help="Write figures here too")

    def handle(self, *args: Any, **options: Any) -> None:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        path = corpus_path(options["beir"])
        try:
            docs = list(read_corpus(path, "bench-" + default_corpus_name(path)))
        except (CorpusError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        if options["limit"]:
            docs = docs[: options["limit"]]
        reference = None if options["no_reference"] else _BareEncoder(path, len(docs))
        embedder = _warm_embedder()
        figures: dict[str, Any] = {"load_avg_start": round(os.getloadavg()[0], 2)}
        before = reference.measure() if reference else None
        old_name = _create_scratch_database()
        try:
            figures.update(_measure(docs, embedder, options["batch_size"]))
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
        if reference is not None and before is not None:
            figures.update(_compare(figures, before, reference.measure(), reference))
        figures["load_avg_end"] = round(os.getloadavg()[0], 2)
        figures["corpus"] = str(path)
        self._print(figures, options["json"])

    def _print(self, figures: dict[str, Any], out: Path | None) -> None:
        for key in FIRST_KEYS:
            if key in figures:
                self.stdout.write(f"{key}: {figures[key]}")
        for key, value in figures.items():
            if key not in {*FIRST_KEYS, "machine"}:
                self.stdout.write(f"{key}: {value}")
        if out is not None:
            out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


class _BareEncoder:
    """``SentenceTransformer.encode`` of one title + text per document, batch 32."""

    def __init__(self, path: Path, limit: int) -> None:
        from research.providers.embedder import _load_torch

        self.texts: list[str] = []
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if len(self.texts) >= limit:
                    break
                record = json.loads(line)
                self.texts.append(f"{record.get('title', '')} {record.get('text', '')}".strip())
        self.model = _load_torch("")
        self.model.encode(["warm up the model before the clock starts"])

    def measure(self) -> float:
        started = time.perf_counter()
        self.model.encode(self.texts, batch_size=32, show_progress_bar=False)
        return time.perf_counter() - started

    def tokens(self) -> list[int]:
        limit = int(self.model.max_seq_length)
        encoded = self.model.tokenizer(self.texts, truncation=True, max_length=limit)
        return [len(ids) for ids in encoded["input_ids"]]


def _compare(
    figures: dict[str, Any], before: float, after: float, reference: _BareEncoder
) -> dict[str, Any]:
    docs = figures["docs"]
    mean = (before + after) / 2
    bare_tokens = reference.tokens()
    return {
        "encode_docs_per_s": round(docs / mean, 2),
        "ratio": round(figures["docs_per_s"] / (docs / mean), 3),
        "encode_before_s": round(before, 1),
        "encode_after_s": round(after, 1),
        "encode_tokens_per_doc": round(float(np.mean(bare_tokens)), 1),
    }


def _warm_embedder() -> _TimedEmbedder:
    from research.providers.embedder import Embedder

    embedder = Embedder.from_settings()
    embedder.encode(["warm up the model before the clock starts"])
    embedder.encode(["warm up the bulk session too"] * 16)
    return _TimedEmbedder(embedder)


def _create_scratch_database() -> str:
    """A fresh, migrated database; returns the previous name for ``destroy_test_db``."""
    old_name = str(connection.settings_dict["NAME"])
    connection.settings_dict.setdefault("TEST", {})["NAME"] = SCRATCH_DB
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    return old_name


def _measure(docs: list[Any], embedder: _TimedEmbedder, batch_size: int) -> dict[str, Any]:
    timings = IngestTimings()
    started = time.perf_counter()
    results = do_import_corpus(
        docs, "bench", batch_size=batch_size, embedder=embedder, timings=timings
    )
    wall = time.perf_counter() - started
    counts = summarize(results)
    if counts.get("added", 0) != len(docs):
        raise CommandError(f"scratch ingest did not add every document: {counts}")
    texts = _ingested_texts()
    lengths = embedder.inner.token_lengths(texts) if texts else [0]
    return {
        "docs_per_s": round(len(docs) / wall, 2),
        "passages_per_s": round(counts["passages"] / wall, 2),
        "embed_share": round(embedder.seconds / wall, 3),
        "docs": len(docs),
        "passages": counts["passages"],
        "embedded_texts": embedder.texts,
        "embedded_tokens_per_doc": round(float(np.sum(lengths)) / len(docs), 1),
        "embedded_tokens_per_text": round(float(np.mean(lengths)), 1),
        "wall_s": round(wall, 1),
        "embed_s": round(embedder.seconds, 1),
        "prepare_s": round(timings.prepare_s, 1),
        "lookup_s": round(timings.lookup_s, 1),
        "write_s": round(timings.write_s, 1),
        "wait_for_encoder_s": round(timings.wait_s, 1),
        "pack_s": round(timings.pack_s, 1),
        "batch_size": batch_size,
        "embedder": embedder.label,
        "cpus": os.cpu_count() or 0,
        "machine": platform.platform(),
    }


def _ingested_texts() -> list[str]:
    """What the encoder saw: each chunk passage with its title and section (as ingest builds it)."""
    from ledger.models import Passage
    from ledger.services.ingest import embedding_text

    rows = Passage.objects.filter(kind="chunk").values_list("source__title", "section_path", "text")
    return [embedding_text(title, section, text) for title, section, text in rows]
