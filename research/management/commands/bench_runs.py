"""End-to-end benchmark: questions through the real planner and pipeline, scored at mining.

    python manage.py bench_runs --scifact ../shared/data/scifact --split train --limit 100 \
        --until mining [--json OUT]
    python manage.py bench_runs --library-bench docs/bench/libraries/cpython-free-threading \
        [--docs DIR] [--until mining|verifying] [--json OUT] [--claims-out OUT.md] \
        [--reader-marks MARKS.json]

The second form runs a benchmark library's five gold questions over its documents (see
``research/management/library_bench.py``): claims per question, gold findings recovered
and recall@10. The share of claims a reader keeps is not computed by the machine: the
claim list (``--claims-out``) has an empty ``keep?`` column for a reader, and only their
marks (``--reader-marks``) give the share.

In the first form, each SciFact claim with evidence becomes a question: the configured
planner proposes a plan over the "scifact" library, and the run is driven by the same
``runner.step`` the workers use, until mining (or verifying) is done. Its kept claims,
ranked by relevance, are compared with the claim's gold rationale sentences (see
``research.bench.mining``). The library is imported once into this database
(the first call imports it when it is missing). In both forms each benchmark run and its
plan are deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger.models import Library, Source
from research.bench.library_scoring import NO_READER
from research.bench.mining import (
    AnchorSpan,
    GoldQuestion,
    RankedClaim,
    RunsBench,
    score_question,
)
from research.bench.scifact import SciFactClaim, SciFactDoc, load_claims, load_corpus
from research.management.benchruns import (
    UNTIL,
    bench_user,
    claims_with_anchors,
    delete_run,
    drive_run,
)
from research.management.library_bench import LibraryBench, LibraryBenchOptions, read_marks
from research.models import Run, RunState, StageCheckpoint
from research.pipeline.claims.roles import NON_FINDING_ROLES, classify_sentence
from research.stages.retrieve import pools_of_checkpoint

FIGURES = (
    "questions",
    "rationale_recall_at_10",
    "rationale_recall",
    "gold_source_recall",
    "claims_per_question",
    "method_or_aim_share",
    "wall_s_per_question",
)


class Command(BaseCommand):
    help = (
        "SciFact claims, or a benchmark library's questions, through the planner and"
        " pipeline: mining figures."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--scifact", type=Path, help="the SciFact data folder")
        mode.add_argument(
            "--library-bench", type=Path, help="a folder of docs/bench/libraries/ (SOURCES.md …)"
        )
        parser.add_argument("--docs", default="", help="the library's documents folder")
        parser.add_argument("--claims-out", type=Path, default=None, help="claim lists (.md)")
        parser.add_argument("--reader-marks", type=Path, default=None, help="JSON text -> keep")
        parser.add_argument("--split", choices=("train", "dev"), default="train")
        parser.add_argument("--limit", type=int, default=0, help="first N claims with evidence")
        parser.add_argument("--until", choices=tuple(UNTIL), default="mining")
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument("--library", default="scifact")
        parser.add_argument("--keep", action="store_true", help="keep the runs and plans")

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.providers.embedder import configure_threads

        configure_threads()
        if opts["library_bench"] is not None:
            self._library_bench(opts)
            return
        directory: Path = opts["scifact"]
        try:
            claims = [c for c in load_claims(directory, opts["split"]) if c.rationales]
            corpus = load_corpus(directory)
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        claims = claims[: opts["limit"]] if opts["limit"] else claims
        library = self._library(opts["library"], directory, len(corpus))
        user = bench_user()
        bench = RunsBench()
        details = []
        for n, claim in enumerate(claims, start=1):
            gold = gold_question(claim, corpus, opts["library"])
            run, wall_s = drive_run(user, library, claim.text, UNTIL[opts["until"]])
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

    def _library_bench(self, opts: dict[str, Any]) -> None:
        marks = read_marks(opts["reader_marks"]) if opts["reader_marks"] else None
        options = LibraryBenchOptions(
            opts["library_bench"], opts["docs"], opts["until"], opts["keep"], marks
        )
        bench = LibraryBench(options, self.stderr)
        figures = bench.run()
        for key, value in figures.items():
            self.stdout.write(f"{key}: {value}")
        if marks is None:
            self.stdout.write(NO_READER)
        command = f"manage.py bench_runs --library-bench {opts['library_bench']}"
        command += f" --until {opts['until']}" + (" --docs …" if opts["docs"] else "")
        if opts["claims_out"]:
            opts["claims_out"].write_text(bench.claims_markdown(figures, command), encoding="utf-8")
        if opts["json"]:
            payload = {**figures, "library": bench.name, "until": opts["until"]}
            payload["details"] = bench.details()
            opts["json"].write_text(json.dumps(payload, indent=1))


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
    for claim, links in claims_with_anchors(run):
        spans = tuple(
            AnchorSpan(link.snapshot.source.canonical_id, link.quote_start, link.quote_end)
            for link in links
        )
        quote = links[0].quote if links else claim.text
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
