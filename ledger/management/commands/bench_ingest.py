"""``bench_ingest --beir DIR [--limit N] [--json OUT]``: ingest throughput and embed share.

The corpus is ingested into a fresh scratch database (created and migrated before the
clock starts, dropped afterwards), so every document is really parsed, chunked, hashed,
embedded and written each time. The embedding model is loaded and warmed up before the
clock starts, as in a long-running worker. ``embed_share`` is the fraction of wall time
spent inside ``Embedder.encode``.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from ledger.services.corpus import CorpusError, corpus_path, default_corpus_name, read_corpus
from ledger.services.ingest import IngestTimings, summarize
from ledger.services.library import do_import_corpus

SCRATCH_DB = "bench_ingest_scratch"


class _TimedEmbedder:
    """Wraps the real embedder and adds up the seconds spent inside ``encode``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.label = inner.label
        self.seconds = 0.0

    def encode(self, texts: list[str]) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.encode(texts)
        finally:
            self.seconds += time.perf_counter() - started


class Command(BaseCommand):
    help = "Measure ingestion throughput of a BEIR corpus in a scratch database."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--beir", required=True, type=Path, help="BEIR folder or corpus.jsonl")
        parser.add_argument("--limit", type=int, default=0, help="First N documents only")
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--json", type=Path, default=None, help="Write figures here too")

    def handle(self, *args: Any, **options: Any) -> None:
        path = corpus_path(options["beir"])
        try:
            docs = list(read_corpus(path, "bench-" + default_corpus_name(path)))
        except (CorpusError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        if options["limit"]:
            docs = docs[: options["limit"]]
        embedder = _warm_embedder()
        old_name = _create_scratch_database()
        try:
            figures = _measure(docs, embedder, options["batch_size"])
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
        figures["corpus"] = str(path)
        self._print(figures, options["json"])

    def _print(self, figures: dict[str, Any], out: Path | None) -> None:
        for key in ("docs_per_s", "passages_per_s", "embed_share"):
            self.stdout.write(f"{key}: {figures[key]}")
        for key, value in figures.items():
            if key not in {"docs_per_s", "passages_per_s", "embed_share", "machine"}:
                self.stdout.write(f"{key}: {value}")
        if out is not None:
            out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


def _warm_embedder() -> _TimedEmbedder:
    from research.providers.embedder import Embedder

    embedder = Embedder.from_settings()
    embedder.encode(["warm up the model before the clock starts"])
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
    return {
        "docs_per_s": round(len(docs) / wall, 2),
        "passages_per_s": round(counts["passages"] / wall, 2),
        "embed_share": round(embedder.seconds / wall, 3),
        "docs": len(docs),
        "passages": counts["passages"],
        "wall_s": round(wall, 1),
        "embed_s": round(embedder.seconds, 1),
        "prepare_s": round(timings.prepare_s, 1),
        "lookup_s": round(timings.lookup_s, 1),
        "write_s": round(timings.write_s, 1),
        "batch_size": batch_size,
        "cpus": os.cpu_count() or 0,
        "machine": platform.platform(),
    }
