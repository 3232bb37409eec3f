"""``packpostings [--all]``: index what the BM25 index misses, then fold the postings
added or deleted since into packed blocks.

Ingest does both for every batch (``sync_sparse_index``); run it after upgrading an
existing database: passages stored before the BM25 index existed, or by an older import,
are found by dense search only until they are indexed (a library copied from such a
database had 16,464 of its 16,633 SciFact passages missing), and migration 0013 leaves
every term unpacked (queries read unpacked postings row by row until then). Also after a
large bulk delete.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ledger.services.sparse_index import pack_sparse_index, sync_sparse_index


class Command(BaseCommand):
    help = (
        "Index the passages missing from the BM25 index, then fold the postings added or "
        "deleted since into the packed per-term blocks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all",
            action="store_true",
            help="every term with a pending posting, not only those past the threshold",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        synced = sync_sparse_index(pack=False)
        if synced.indexed:
            self.stdout.write(
                f"indexed {synced.indexed} passages missing from the BM25 index"
                f" in {time.perf_counter() - started:.1f} s"
            )
            started = time.perf_counter()
        report = pack_sparse_index(due_only=not options["all"])
        self.stdout.write(
            f"packed {report.terms} terms ({report.postings} postings)"
            f" in {time.perf_counter() - started:.1f} s"
        )
