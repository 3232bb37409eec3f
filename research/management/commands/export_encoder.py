"""``export_encoder [--backend onnx-int8|onnx]``: export the configured encoder to ONNX now.

``make setup`` and the Docker build run it so the first ingest or query does not pay for
the export (about 10 s); without it the export happens on first use. Offline: the graph
is traced from the weights on disk. A second call finds the export and does nothing.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Export the configured sentence encoder to ONNX (int8 by default), offline."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--backend", choices=("onnx-int8", "onnx"), default=None)

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.providers.embedder import Embedder, EmbedderUnavailable

        backend = opts["backend"] or settings.EMBEDDING_BACKEND
        if backend == "torch":
            self.stdout.write("EMBEDDING_BACKEND=torch: nothing to export")
            return
        embedder = Embedder(
            settings.EMBEDDING_MODEL,
            settings.EMBEDDING_BATCH_SIZE,
            backend,
            settings.ENCODER_CACHE_DIR,
        )
        started = time.perf_counter()
        try:
            export = embedder._onnx().export
        except EmbedderUnavailable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{embedder.label}: {export.folder} (check cosine {export.check_cosine:.4f},"
            f" {time.perf_counter() - started:.1f} s)"
        )
