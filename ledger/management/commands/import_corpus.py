"""``import_corpus PATH [--library NAME]``: a folder of files or a BEIR / SciFact corpus.jsonl."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger.services.corpus import (
    BadLine,
    CorpusError,
    corpus_path,
    default_corpus_name,
    detect_format,
    read_corpus,
)
from ledger.services.ingest import (
    IngestProgress,
    IngestResult,
    format_duration,
    remaining_seconds,
    summarize,
)
from ledger.services.library import do_import_corpus


class _Printer(IngestProgress):
    """One line per batch: documents done, rate, and the time left at that rate."""

    def __init__(self, command: BaseCommand) -> None:
        self.command = command
        self.started = time.monotonic()

    def batch_done(self, done: int, total: int, results: Any) -> None:
        elapsed = time.monotonic() - self.started
        of = f"/{total}" if total else ""
        line = f"  {done}{of} documents processed in {format_duration(elapsed)}"
        line += f" ({done / elapsed:.1f} docs/s)" if elapsed > 0 else ""
        left = remaining_seconds(done, total, elapsed)
        if left is not None and done < total:
            line += f", about {format_duration(left)} left"
        self.command.stderr.write(line)


class Command(BaseCommand):
    help = "Ingest a folder of HTML/PDF/Markdown/text files or a BEIR / SciFact corpus.jsonl."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--library", default="", help="Library name (default: corpus name)")
        parser.add_argument("--corpus-name", default="", help="Used in corpus:<name>:<id> ids")
        parser.add_argument("--source-type", default=None, help="Source type of corpus records")
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument(
            "--owner",
            default="",
            help="Username whose private library this is (default: a public library, "
            "readable by every signed-in user)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = corpus_path(options["path"])
        try:
            fmt = detect_format(path)
        except CorpusError as exc:
            raise CommandError(str(exc)) from exc
        name = options["corpus_name"] or default_corpus_name(path)
        library_name = options["library"] or name
        owner = None
        if options["owner"]:
            owner = User.objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user is named {options['owner']!r}")
        bad_lines: list[BadLine] = []
        docs = list(read_corpus(path, name, options["source_type"], bad_lines))
        access = (
            f"private to {owner.username}" if owner else "public: every signed-in user reads it"
        )
        self.stdout.write(
            f"{path}: {fmt} format, {len(docs)} documents -> library {library_name!r} ({access})"
        )
        for bad in bad_lines:
            self.stdout.write(f"skipped {bad}")
        results = do_import_corpus(
            docs,
            library_name,
            progress=_Printer(self),
            batch_size=options["batch_size"],
            owner=owner,
        )
        self._report(results)
        if bad_lines:
            self.stdout.write(f"bad_lines: {len(bad_lines)}")

    def _report(self, results: list[IngestResult]) -> None:
        counts = summarize(results)
        for result in results:
            if result.status == "failed":
                self.stdout.write(f"failed: {result.label}: {result.error}")
        added = counts.get("added", 0) + counts.get("new_snapshot", 0)
        for key in ("added", "new_snapshot", "unchanged", "duplicate", "failed", "passages"):
            self.stdout.write(f"{key}: {counts.get(key, 0)}")
        if not added:
            self.stdout.write(
                f"nothing new: all {len(results)} documents were already ingested"
                if not counts.get("failed")
                else "nothing new was added"
            )
        sys.stdout.flush()
