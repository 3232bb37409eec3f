"""Benchmark the production verification path on SciFact (contract in DESIGN.md).

    python manage.py bench_verification --scifact ../shared/data/scifact --split train --oracle

Prints accuracy, macro_f1, f1_support, f1_contradict, f1_nei, escape_rate,
false_fail_rate, pass_precision, fail_precision, pass_coverage, support_recall,
per-label precision and recall, ece and claims_per_min, one ``key: value`` line each,
and the entailment family's (window, claim) pairs scored per second. ``--out-of-domain``
scores the committed non-biomedical claims (``tests/fixtures/verify/ood``, SciFact
format) the same way, always against their own cited articles (oracle). ``--agreement``
adds each family's own accuracy per gold label and how often two families' errors
coincide; ``--ablation`` scores the claims again with each hand predicate of the verdict
path off (``research.bench.verification.ablation_variants``: the aggregate's lexical
predicates on the same votes, each rules check, align's support veto) and each family
left out. On ``--split train``
the learned, align and NLI families score every claim with the cross-validation fold
model that never saw it, so the figures are out-of-fold, not in-sample
(``out_of_fold: 1``; the NLI fold models come from ``train_nli --stage folds``). Without
``--oracle`` each claim's support and refutation queries run through
``research.retrieval`` over the "scifact" library (imported by ``importcorpus``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from research.pipeline.verify.records import EvidenceItem

OOD_FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "verify" / "ood"


class Command(BaseCommand):
    help = "SciFact claim verification figures for the production verification path."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scifact", type=Path, default=None)
        parser.add_argument(
            "--out-of-domain",
            action="store_true",
            help="score the committed out-of-domain claims (tests/fixtures/verify/ood: news, "
            "climate, economics, software …) with the same metrics against their own "
            "articles; implies --split dev --oracle (the fixture articles are in no library)",
        )
        parser.add_argument("--split", choices=("train", "dev"), default="train")
        parser.add_argument("--oracle", action="store_true", help="cited abstracts only")
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument("--limit", type=int, default=0, help="first N claims only")
        parser.add_argument("--library", default="scifact", help="library for open retrieval")
        parser.add_argument("--k", type=int, default=3, help="passages per query (open)")
        parser.add_argument(
            "--cache", action="store_true", help="reuse the disk embedding cache (faster)"
        )
        parser.add_argument(
            "--ablation",
            action="store_true",
            help="oracle only: also score the claims with each hand predicate of the verdict "
            "path switched off, and with each family left out (one table)",
        )
        parser.add_argument(
            "--agreement",
            action="store_true",
            help="also print each judging family's claim-level accuracy per gold label and "
            "how often two families' errors coincide",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.bench.scifact import load_claims, load_corpus
        from research.bench.verification import run_open, run_oracle
        from research.pipeline.verify import default_config, verify_encoder
        from research.pipeline.verify.embedcache import EmbeddingCache
        from research.providers.embedder import configure_threads

        from .train_verifier import cache_dir

        configure_threads()
        if opts["out_of_domain"]:
            # Oracle always: open retrieval would search the SciFact library for claims
            # about central banks and sea ice, and score every claim UNCERTAIN.
            opts["scifact"], opts["split"], opts["oracle"] = OOD_FIXTURES, "dev", True
        if opts["scifact"] is None:
            raise CommandError("give --scifact DIR or --out-of-domain")
        directory: Path = opts["scifact"]
        try:
            claims = load_claims(directory, opts["split"])
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        claims = claims[: opts["limit"]] if opts["limit"] else claims
        # The vectors the verify stage sees (VERIFY_EMBEDDING_BACKEND), not retrieval's.
        embedder = verify_encoder()
        path = cache_dir(embedder.label) if opts["cache"] else None
        cache = EmbeddingCache(embedder.encode, path)
        # The families the verify stage runs, shadow ones included (VERIFIER_SHADOW).
        out_of_fold = opts["split"] == "train"
        config = default_config(cache.encode, out_of_fold=out_of_fold)
        verifiers, notes = config.verifiers, config.notes
        if opts["oracle"]:
            result = run_oracle(claims, load_corpus(directory), config, self._progress)
        else:
            retrieve = self._retrieve(opts["library"])
            result = run_open(claims, retrieve, config, k=opts["k"], progress=self._progress)
        figures = result.figures()
        for key in (
            "accuracy",
            "macro_f1",
            "f1_support",
            "f1_contradict",
            "f1_nei",
            "escape_rate",
            "false_fail_rate",
            "pass_precision",
            "fail_precision",
            "pass_coverage",
            "support_recall",
            "precision_support",
            "recall_support",
            "precision_contradict",
            "recall_contradict",
            "precision_nei",
            "recall_nei",
            "ece",
            "claims_per_min",
        ):
            self.stdout.write(f"{key}: {figures[key]}")
        self.stdout.write(f"claims: {len(result.gold)}")
        from research.pipeline.verify.nli import NLIVerifier

        nli = next((v for v in verifiers if isinstance(v, NLIVerifier)), None)
        if nli is not None:
            self.stdout.write(f"nli_pairs_per_s: {nli.pairs_per_s():.1f}")
        # Which families judged these figures (a quorum of 2 with fewer families that can
        # support a paraphrase is a different verifier: say so next to the figures).
        states = config.family_states()
        self.stdout.write(
            "families: " + "; ".join(f"{name} ({state})" for name, state in sorted(states.items()))
        )
        self.stdout.write(f"out_of_fold: {int(out_of_fold)}")
        if opts["agreement"]:
            from research.bench.verification import agreement_table

            for line in agreement_table(result.details):
                self.stdout.write(line)
        if opts["ablation"]:
            if not opts["oracle"]:
                raise CommandError("--ablation needs --oracle")
            self._ablation(claims, load_corpus(directory), config)
        if opts["json"]:
            payload = {
                **figures,
                "claims": len(result.gold),
                "out_of_fold": out_of_fold,
                "oracle": opts["oracle"],
                "split": opts["split"],
                "verifiers": [v.name for v in verifiers],
                "not_run": notes,
                "families": states,
                "quorum": config.aggregate.quorum,
                "embedding_cache": "disk" if path else "memory (encoding time included)",
                "details": result.details,
            }
            opts["json"].write_text(json.dumps(payload, indent=1))
        cache.save()

    def _ablation(self, claims: Any, docs: Any, config: Any) -> None:
        from research.bench.verification import ablation_variants, run_oracle

        keys = (
            "macro_f1",
            "escape_rate",
            "false_fail_rate",
            "support_recall",
            "pass_precision",
            "fail_precision",
            "pass_coverage",
            "ece",
        )
        self.stdout.write("ablation | " + " | ".join(keys))
        for name, variant in ablation_variants(config).items():
            figures = run_oracle(claims, docs, variant).figures()
            self.stdout.write(f"{name} | " + " | ".join(f"{figures[k]:.4f}" for k in keys))

    def _progress(self, done: int) -> None:
        self.stderr.write(f"... {done} claims")

    def _retrieve(self, library_name: str) -> Any:
        from ledger.models import Library
        from ledger.readers import context_items
        from research import retrieval
        from research.pipeline.retrieve.records import Filters, RetrievalRequest

        library = Library.objects.filter(name=library_name).first()
        if library is None:
            raise CommandError(
                f"no library {library_name!r}: import the corpus first "
                "(manage.py importcorpus ../shared/data/scifact)"
            )
        filters = Filters(library_ids=(library.pk,))

        def retrieve(text: str, k: int) -> list[EvidenceItem]:
            hits = retrieval.retrieve(RetrievalRequest(text=text, limit=k, filters=filters)).hits
            return context_items(hits)

        return retrieve
