"""End-to-end benchmark: SciFact claims as questions through the real planner and pipeline.

    python manage.py bench_runs --scifact ../shared/data/scifact --split train --limit 100 \
        --until mining [--json OUT]

Each SciFact claim with evidence becomes a question: the configured planner proposes a
plan over the "scifact" library, and the run is driven by the same ``runner.step`` the
workers use, until mining (or verifying) is done. Its kept claims, ranked by relevance,
are compared with the claim's gold rationale sentences (see
``research.pipeline.claims.bench``). The library is imported once into this database
(the first call imports it when it is missing); each benchmark run and its plan are
deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from ledger.models import Claim, EvidenceLink, Library, Source
from research import runner, services
from research.models import Plan, Run, RunState, StageCheckpoint
from research.pipeline.claims.bench import (
    AnchorSpan,
    GoldQuestion,
    RankedClaim,
    RunsBench,
    score_question,
)
from research.pipeline.claims.roles import NON_FINDING_ROLES, classify_sentence
from research.pipeline.verify.scifact import SciFactClaim, SciFactDoc, load_claims, load_corpus
from research.stages.retrieve import pools_of_checkpoint

UNTIL = {"mining": RunState.COUNTERING, "verifying": RunState.AWAITING_REVIEW}
FIGURES = (
    "questions",
    "rationale_recall_at_10",
    "rationale_recall",
    "gold_source_recall",
    "claims_per_question",
    "method_or_aim_share",
    "wall_s_per_question",
)
BENCH_USER = "bench_runs"


class Command(BaseCommand):
    help = "SciFact claims as questions through the planner and pipeline: mining figures."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scifact", type=Path, required=True)
        parser.add_argument("--split", choices=("train", "dev"), default="train")
        parser.add_argument("--limit", type=int, default=0, help="first N claims with evidence")
        parser.add_argument("--until", choices=tuple(UNTIL), default="mining")
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument("--library", default="scifact")
        parser.add_argument("--keep", action="store_true", help="keep the runs and plans")

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.providers.embedder import configure_threads

        configure_threads()
        directory: Path = opts["scifact"]
        try:
            claims = [c for c in load_claims(directory, opts["split"]) if c.rationales]
            corpus = load_corpus(directory)
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        claims = claims[: opts["limit"]] if opts["limit"] else claims
        library = self._library(opts["library"], directory, len(corpus))
        user = _bench_user()
        bench = RunsBench()
        details = []
        for n, claim in enumerate(claims, start=1):
            gold = gold_question(claim, corpus, opts["library"])
            run, wall_s = self._run(user, library, claim.text, UNTIL[opts["until"]])
            score = score_question(
                gold, ranked_claims(run), run_sources(run), wall_s, NON_FINDING_ROLES
            )
            bench.scores.append(score)
            details.append({**score.as_dict(), "run": str(run.code), "state": run.state})
            if not opts["keep"]:
                delete_run(run)
            self.stderr.write(
                f"[{n}/{len(claims)}] claim {claim.claim_id}: "
                f"{'hit' if score.hit_at_10 else 'miss'}@10, {score.claims} claims, "
                f"{wall_s:.1f} s"
            )
        figures = bench.figures()
        for key in FIGURES:
            self.stdout.write(f"{key}: {figures.get(key, 0)}")
        if opts["json"]:
            payload = {**figures, "split": opts["split"], "until": opts["until"]}
            payload["details"] = details
            opts["json"].write_text(json.dumps(payload, indent=1))

    def _library(self, name: str, directory: Path, size: int) -> Library:
        """The SciFact library, imported into this database once (now, when it is missing)."""
        library = Library.objects.filter(name=name).first()
        have = Source.objects.filter(libraries=library).count() if library else 0
        if library is not None and have >= size:
            return library
        from ledger.services.corpus import read_corpus
        from ledger.services.library import do_import_corpus

        self.stderr.write(
            f"library {name!r} has {have} of {size} SciFact abstracts: importing "
            f"{directory / 'corpus.jsonl'} once (a few minutes)"
        )
        do_import_corpus(list(read_corpus(directory / "corpus.jsonl", name)), name)
        return Library.objects.get(name=name)

    def _run(self, user: Any, library: Library, question: str, until: str) -> tuple[Run, float]:
        clock = time.perf_counter()
        try:
            plan = services.check_create_plan(user, question, library=library)
            version = plan.current_version
            assert version is not None
            run = services.check_start_run(user, plan, version.number, enqueue=False)
        except services.PlanInvalid as exc:
            raise CommandError(f"{question!r}: {'; '.join(exc.messages)}") from exc
        while True:
            result = runner.step(run.code)
            if result.state == until or not result.again:
                break
        return Run.objects.get(pk=run.pk), time.perf_counter() - clock


def _bench_user() -> Any:
    user, created = get_user_model().objects.get_or_create(username=BENCH_USER)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    user.groups.add(*Group.objects.filter(name=services.RESEARCHER_GROUP))
    return user


def gold_question(claim: SciFactClaim, corpus: dict[int, SciFactDoc], library: str) -> GoldQuestion:
    """The claim's gold rationale sentences as snapshot offsets of the imported abstracts."""
    spans: dict[str, tuple[tuple[int, int], ...]] = {}
    for doc_id, indices in claim.rationales.items():
        doc = corpus.get(doc_id)
        if doc is None:
            continue
        sentence_spans = doc.sentence_spans()[1:]  # the first span is the title
        spans[f"corpus:{library}:{doc_id}"] = tuple(
            sentence_spans[i] for i in indices if i < len(sentence_spans)
        )
    return GoldQuestion(claim.claim_id, claim.text, spans)


def ranked_claims(run: Run) -> list[RankedClaim]:
    out = []
    links = EvidenceLink.objects.filter(claim__run=run, is_anchor=True).select_related(
        "snapshot__source"
    )
    anchors: dict[int, list[EvidenceLink]] = {}
    for link in links:
        anchors.setdefault(link.claim_id, []).append(link)
    for claim in Claim.objects.filter(run=run).order_by("pk"):
        spans = tuple(
            AnchorSpan(link.snapshot.source.canonical_id, link.quote_start, link.quote_end)
            for link in anchors.get(claim.pk, [])
        )
        quote = anchors[claim.pk][0].quote if claim.pk in anchors else claim.text
        relevance = float(getattr(claim, "relevance", None) or 0.0)
        out.append(RankedClaim(claim.text, relevance, spans, classify_sentence(quote).role))
    return out


def run_sources(run: Run) -> set[str]:
    """Canonical ids of the sources the run drew on (its retrieval pools' passages)."""
    ids: set[int] = set()
    for cp in StageCheckpoint.objects.filter(run=run, stage=RunState.RETRIEVING):
        for pools in pools_of_checkpoint(cp).values():
            ids |= {hit.source_id for hit in pools.hits()}
    return set(Source.objects.filter(pk__in=ids).values_list("canonical_id", flat=True))


def delete_run(run: Run) -> None:
    """The benchmark's run and its plan, with everything they own."""
    with transaction.atomic():
        plan = Plan.objects.get(versions__runs=run)
        Run.objects.filter(plan_version__plan=plan).delete()
        plan.delete()
