"""Train and measure the learned sentence-role classifier (model card:
``research/pipeline/language/weights/roles/MODEL_CARD.md``).

    python manage.py train_roles --scifact ../shared/data/scifact \
        --ood ../libraries/public-sector-open-source/docs ../libraries/cpython-free-threading/docs

Labels each sentence of SciFact's structured abstracts by its section heading, splits by
abstract (seeded), encodes with the product's int8 MiniLM, fits a logistic regression,
prints per-role and finding-vs-not F1 of the model and of today's regexes on the held-out
abstracts, writes ``roles.npz`` + ``roles.json`` to ``--out`` and the figures to
``--work/training.json``. Never run by ``make setup`` or CI: the weights are committed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Train the sentence-role classifier and compare it with the role regexes."

    def add_arguments(self, parser: CommandParser) -> None:
        from research.pipeline.language.roles_model import SHIPPED

        parser.add_argument("--scifact", type=Path, required=True, help="shared/data/scifact")
        parser.add_argument("--work", type=Path, default=Path(".data/roles-train"))
        parser.add_argument("--out", type=Path, default=SHIPPED, help="where the weights go")
        parser.add_argument("--ood", type=Path, nargs="*", default=[], help="other documents")

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.bench import roles_training
        from research.pipeline.language.roles_model import default_encoder
        from research.providers.base import ProviderError
        from research.providers.embedder import EmbedderUnavailable

        try:
            roles_training.run(
                opts["scifact"],
                opts["work"],
                opts["out"],
                default_encoder(),
                [p for p in opts["ood"] if p.is_dir()],
                log=lambda line: self.stdout.write(line),
            )
        except (OSError, ValueError, ProviderError, EmbedderUnavailable) as exc:
            raise CommandError(str(exc)) from exc
