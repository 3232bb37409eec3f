"""``packpostings [--all]``: fold the BM25 postings added or deleted since into packed blocks.

Ingest does this for the terms that need it after every batch (``sync_sparse_index``);
run it after upgrading an existing index (migration 0013 leaves every term unpacked, and
queries read unpacked postings row by row until then) or after a large bulk delete.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ledger.services.sparse_index import pack_sparse_index


class Command(BaseCommand):
    help = "Fold the BM25 postings added or deleted since into the packed per-term blocks."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all",
            action="store_true",
            help="every term with a pending posting, not only those past the threshold",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        report = pack_sparse_index(due_only=not options["all"])
        self.stdout.write(
            f"packed {report.terms} terms ({report.postings} postings)"
            f" in {time.perf_counter() - started:.1f} s"
        )
