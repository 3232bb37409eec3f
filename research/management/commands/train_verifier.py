"""Train the offline learned verifier on SciFact train and write its weights (JSON).

    python manage.py train_verifier --scifact ../shared/data/scifact
    python manage.py train_verifier --scifact ../shared/data/scifact --family align

``--family align`` trains the second offline family (word alignment, ``align.py``) on the
same grouped folds and chooses *both* families' thresholds together for the quorum they
form (nested, ``quorum_training.py``): it writes the align weights and the learned
weights' thresholds (their coefficients and calibration unchanged), and prints the
out-of-fold agreement table of the two families.

Needs the ``train`` extra (scikit-learn: ``pip install '.[train]'``). Reproducible: fixed
fold seed and solver seed, deterministic features, MiniLM vectors cached under
.data/cache/verify/ (the corpus is encoded once). Prints the grouped cross-validation
figures and the baselines it must beat; see docs/verifier.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from research.bench.verifier_training import TrainConfig, train_and_evaluate
from research.pipeline.verify.learned import WEIGHTS_PATH


class Command(BaseCommand):
    help = "Train the learned claim verifier on SciFact (grouped CV figures, shipped weights)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scifact", type=Path, required=True, help="SciFact release dir")
        parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
        parser.add_argument(
            "--align-out", type=Path, default=None, help="align weights (default: shipped path)"
        )
        parser.add_argument("--c", type=float, default=TrainConfig.c)
        parser.add_argument("--max-escape", type=float, default=TrainConfig.max_escape)
        parser.add_argument("--folds", type=int, default=TrainConfig.folds)
        parser.add_argument("--fold-seed", type=int, default=TrainConfig.fold_seed)
        parser.add_argument(
            "--family",
            choices=("learned", "align"),
            default="learned",
            help="align: train the word-alignment family and both families' quorum thresholds",
        )
        parser.add_argument(
            "--calibrate-only",
            action="store_true",
            help="keep the shipped models, (re)fit only their Platt calibration",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if importlib.util.find_spec("sklearn") is None:
            raise CommandError("training needs scikit-learn: pip install '.[train]'")
        from research.bench.scifact import load_claims, load_corpus
        from research.pipeline.verify import verify_encoder
        from research.pipeline.verify.embedcache import EmbeddingCache
        from research.providers.embedder import configure_threads

        configure_threads()
        directory: Path = opts["scifact"]
        docs, claims = load_corpus(directory), load_claims(directory, "train")
        if opts["calibrate_only"]:
            self._calibrate(docs, claims, opts["out"])
            return
        if opts["family"] == "align":
            self._align(docs, claims, opts["out"], opts["align_out"])
            return
        embedder = verify_encoder()  # the vectors verification sees, as _calibrate
        cache = EmbeddingCache(embedder.encode, cache_dir(embedder.label))
        cfg = TrainConfig(
            c=opts["c"],
            max_escape=opts["max_escape"],
            folds=opts["folds"],
            fold_seed=opts["fold_seed"],
        )
        weights, report = train_and_evaluate(claims, docs, cache.encode, cfg)
        cache.save()
        claims_file = directory / "claims_train.jsonl"
        weights.meta["trained_on"] = {
            "claims_sha256": hashlib.sha256(claims_file.read_bytes()).hexdigest(),
            "embedding_model": embedder.label,
        }
        weights.save(opts["out"])
        for key, value in report.items():
            self.stdout.write(f"{key}: {value:.4f}")
        self.stdout.write(f"support_threshold: {weights.model.support_threshold}")
        self.stdout.write(f"contradict_threshold: {weights.model.contradict_threshold}")
        self.stderr.write(f"weights written to {opts['out']}")

    def _align(self, docs: Any, claims: Any, learned_path: Path, out: Path | None) -> None:
        from research.bench.quorum_training import train_quorum
        from research.pipeline.verify import verify_encoder
        from research.pipeline.verify.align import ALIGN_WEIGHTS_PATH
        from research.pipeline.verify.embedcache import EmbeddingCache
        from research.pipeline.verify.learned import VerifierWeights

        encoder = verify_encoder()
        cache = EmbeddingCache(encoder.encode, cache_dir(encoder.label))
        result = train_quorum(claims, docs, cache.encode, VerifierWeights.load(learned_path))
        cache.save()
        result.align.meta["trained_on"] = {"embedding_model": encoder.label}
        out = out or ALIGN_WEIGHTS_PATH
        result.align.save(out)
        result.learned.save(learned_path)
        for key, value in result.report.items():
            self.stdout.write(f"{key}: {value:.4f}")
        self.stdout.write("agreement (learned | align | gold: pairs, out-of-fold):")
        for key, count in result.agreement.items():
            self.stdout.write(f"  {key}: {count}")
        self.stderr.write(f"weights written to {out} and {learned_path}")

    def _calibrate(self, docs: Any, claims: Any, out: Path) -> None:
        from research.bench.verifier_training import calibrated_weights
        from research.pipeline.verify import verify_encoder
        from research.pipeline.verify.embedcache import EmbeddingCache
        from research.pipeline.verify.learned import VerifierWeights

        encoder = verify_encoder()  # the vectors verification sees
        cache = EmbeddingCache(encoder.encode, cache_dir(encoder.label))
        weights, report = calibrated_weights(VerifierWeights.load(out), claims, docs, cache.encode)
        cache.save()
        weights.save(out)
        for key, value in report.items():
            self.stdout.write(f"{key}: {value:.4f}")
        self.stderr.write(f"calibration written to {out}")


def cache_dir(label: str) -> Path:
    digest = hashlib.sha256(label.encode()).hexdigest()[:12]
    return Path(settings.BASE_DIR) / ".data" / "cache" / "verify" / f"emb-{digest}"
