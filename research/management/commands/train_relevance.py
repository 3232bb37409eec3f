"""Fit relevance's weights and measure them against today's (model card:
``research/pipeline/language/weights/relevance/MODEL_CARD.md``).

    python manage.py train_relevance --scifact ../shared/data/scifact [--skip 100] \
        [--library docs/bench/libraries/<name> <documents folder> ...]

Builds one candidate list per SciFact train claim with rationales after the first ``--skip``
(the questions ``bench_runs --limit 100`` measures stay out), scores every candidate's five
parts with the production relevance code and encoder, prints held-out ranking figures of the
fitted and the shipped weights (grouped folds) and writes the weights fitted on all of it to
``--out``, with each ``--library``'s out-of-domain ranking figures (measured, never fitted
on). Needs the ``train`` extra (scipy). Never run by ``make setup`` or CI: the weights
are committed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Fit relevance's weights on claim → rationale sentences and compare them."

    def add_arguments(self, parser: CommandParser) -> None:
        from research.pipeline.claims.relevance import SHIPPED

        parser.add_argument("--scifact", type=Path, required=True, help="shared/data/scifact")
        parser.add_argument("--skip", type=int, default=100, help="first N claims left out")
        parser.add_argument("--out", type=Path, default=SHIPPED, help="where the weights go")
        parser.add_argument(
            "--library",
            nargs=2,
            action="append",
            type=Path,
            default=[],
            metavar=("BENCH_FOLDER", "DOCS_FOLDER"),
            help="a benchmark library to measure on (repeatable)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.bench import relevance_training
        from research.providers.base import ProviderError
        from research.providers.embedder import Embedder, EmbedderUnavailable

        try:
            relevance_training.run(
                opts["scifact"],
                opts["out"],
                Embedder.from_settings().encode,
                skip=opts["skip"],
                libraries=[(bench, docs) for bench, docs in opts["library"]],
                log=lambda line: self.stdout.write(line),
            )
        except (OSError, ValueError, ProviderError, EmbedderUnavailable) as exc:
            raise CommandError(str(exc)) from exc
