"""``bench_runs --library-bench LIBRARY_DIR``: a benchmark library's five questions through the
real planner and pipeline, scored against its gold claims.

1. The documents are checked against the library's manifest and gold set
   (``research.bench.library_manifest``, the checks ``docs/bench/libraries/check.py`` runs);
   any problem stops the command with the problems listed, each naming its file.
2. They are ingested into a public library named after the folder through the upload
   service (``ledger.services.uploads.do_ingest_files_now``: what a browser upload's task
   does, without the queue). Ingestion is keyed by content, so a second call finds every
   document unchanged.
3. Each question becomes a plan with its scope (configured planner) and is stepped until
   ``--until`` like the SciFact mode; its kept claims are scored by
   ``research.bench.library_scoring`` (claims per question, gold recovered, recall@10).
4. The claim lists go to ``--claims-out`` with an empty ``keep?`` column. The share of
   claims a reader keeps needs a reader: it is computed only from ``--reader-marks FILE``
   (JSON ``{claim text: true | false}``) and is reported as not computed otherwise.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import CommandError

from ledger.models import Candidate, CandidateState, Library, Snapshot
from ledger.services.ingest import IngestResult, summarize
from ledger.services.library import get_or_create_library
from ledger.services.uploads import do_ingest_files_now
from research.bench.library_manifest import (
    LibraryQuestion,
    Listed,
    candidate_docs,
    check_library,
    find_docs,
    load_questions,
)
from research.bench.library_scoring import (
    LibraryFigures,
    MinedClaim,
    QuestionResult,
    SetAside,
    Span,
    claims_markdown,
    locate_gold,
    score_question,
)
from research.management.benchruns import (
    UNTIL,
    bench_user,
    claims_with_anchors,
    delete_run,
    drive_run,
)
from research.models import Run


@dataclass(frozen=True)
class LibraryBenchOptions:
    library_dir: Path
    docs: str = ""  # the documents folder; found as check.py finds it when empty
    until: str = "mining"
    keep: bool = False  # keep the runs and plans
    marks: Mapping[str, bool] | None = None  # a reader's keep marks, by claim text


def checked_docs(library_dir: Path, docs: str = "") -> tuple[Path, dict[str, Listed]]:
    """The documents folder and manifest, or a CommandError listing every problem."""
    if not (library_dir / "SOURCES.md").is_file():
        raise CommandError(f"{library_dir}: no SOURCES.md there (not a benchmark library)")
    folder = find_docs(library_dir, docs)
    if folder is None:
        looked = docs or ", ".join(str(p) for p in candidate_docs(library_dir))
        raise CommandError(f"No documents folder for {library_dir.name} (looked at {looked})")
    manifest, errors, _ = check_library(library_dir, folder)
    if errors:
        raise CommandError(
            f"{library_dir.name}: the documents in {folder} do not match the manifest:\n  "
            + "\n  ".join(errors)
        )
    return folder, manifest


def ingest_library(
    name: str, folder: Path, manifest: Mapping[str, Listed]
) -> dict[str, IngestResult]:
    """Ingest the manifest's files into the public library ``name``; returns each file's
    result. A file that gets no snapshot stops the command, naming it."""
    library = get_or_create_library(name)
    files = [
        SimpleUploadedFile(
            file, (folder / file).read_bytes(), mimetypes.guess_type(file)[0] or "text/plain"
        )
        for file in sorted(manifest)
    ]
    results = do_ingest_files_now(library, files)
    failed = [
        f"{r.label}: {r.status} {r.error or r.error_reason}".rstrip()
        for r in results
        if not r.snapshot_id
    ]
    if failed:
        raise CommandError(f"{name}: documents not ingested:\n  " + "\n  ".join(failed))
    return {r.label: r for r in results}


def mined_claims(run: Run, files: Mapping[int, str]) -> list[MinedClaim]:
    """The run's kept claims; ``files`` names the library file of each snapshot id."""
    out = []
    for claim, links in claims_with_anchors(run):
        spans = tuple(Span(x.snapshot_id, x.quote_start, x.quote_end) for x in links)
        first = links[0] if links else None
        where = files.get(first.snapshot_id, "") if first else ""
        if first and not where:  # a document outside the library (a web capture)
            where = first.snapshot.source.title or first.snapshot.source.canonical_id
        out.append(MinedClaim(claim.text, float(claim.relevance or 0.0), spans, where))
    return out


def set_aside(run: Run) -> list[SetAside]:
    """The sentences mining dropped or merged in this run, where bound to a snapshot."""
    rows = Candidate.objects.filter(run=run, snapshot__isnull=False, quote_start__isnull=False)
    return [
        SetAside(Span(c.snapshot_id or 0, c.quote_start or 0, c.quote_end or 0), c.state, c.reason)
        for c in rows.exclude(state=CandidateState.KEPT).order_by("pk")
    ]


def read_marks(path: Path) -> dict[str, bool]:
    """A reader's marks: a JSON object of claim text (or ``"Q<n>: "`` + text, for question
    ``n`` alone) -> true (keep) / false (drop)."""
    try:
        marks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CommandError(f"{path}: not a readable JSON file ({exc})") from exc
    if not isinstance(marks, dict) or not all(isinstance(v, bool) for v in marks.values()):
        raise CommandError(f"{path}: expected a JSON object of claim text -> true / false")
    return {str(text): keep for text, keep in marks.items()}


class LibraryBench:
    """One library's benchmark: check, ingest, then each question (see the module)."""

    def __init__(self, options: LibraryBenchOptions, log: Any) -> None:
        self.options, self.log = options, log
        self.name = options.library_dir.resolve().name
        self.scores = LibraryFigures()

    def run(self) -> dict[str, Any]:
        folder, manifest = checked_docs(self.options.library_dir, self.options.docs)
        ingested = ingest_library(self.name, folder, manifest)
        self.log.write(f"{self.name}: ingested {summarize(list(ingested.values()))}")
        snapshot_ids = {file: r.snapshot_id or 0 for file, r in ingested.items()}
        library = Library.objects.get(name=self.name, owner=None)
        texts = dict(
            Snapshot.objects.filter(pk__in=snapshot_ids.values()).values_list("pk", "text")
        )
        snapshots = {file: (pk, texts[pk]) for file, pk in snapshot_ids.items()}
        files = {pk: file for file, pk in snapshot_ids.items()}
        user = bench_user()
        questions = load_questions(self.options.library_dir)
        for number, question in enumerate(questions, start=1):
            result = self._question(user, library, question, snapshots, files)
            self.log.write(
                f"[{number}/{len(questions)}] {len(result.ranked)} claims, gold recovered"
                f" {len(result.recovered)} of {len(question.gold)}"
                f" ({len(result.recovered_at_10)} in the top 10), {result.wall_s:.1f} s"
            )
        return self.scores.figures(self.options.marks)

    def _question(
        self,
        user: Any,
        library: Library,
        question: LibraryQuestion,
        snapshots: Mapping[str, tuple[int, str]],
        files: Mapping[int, str],
    ) -> QuestionResult:
        until = UNTIL[self.options.until]
        run, wall_s = drive_run(user, library, question.question, until, scope=question.scope)
        located = locate_gold(question, snapshots)
        result = score_question(question, mined_claims(run, files), located, wall_s, set_aside(run))
        self.scores.results.append(result)
        if not self.options.keep:
            delete_run(run)
        return result

    def claims_markdown(self, figures: Mapping[str, Any], command: str) -> str:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = [
            f"`{command}` — {stamp}.",
            "",
            ", ".join(f"{key} {value}" for key, value in figures.items() if value is not None),
        ]
        return claims_markdown(f"Claims per question: {self.name}", self.scores.results, header)

    def details(self) -> list[dict[str, Any]]:
        return [result.as_dict() for result in self.scores.results]
