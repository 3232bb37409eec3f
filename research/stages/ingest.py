"""Ingest and index stages: admit the run's sources within the documents budget.

* Ingest — rank the distinct sources the run's hits point at (best rank first), admit
  at most ``budgets.documents`` of them, and fetch + ingest web hits that have no
  Source yet (through the fetcher's pool, several pages at once, and
  ``ledger.services.ingest``, keyed by content hash, so a resumed stage re-ingests
  nothing). Library hits already have sources. A page that failed is remembered in its
  round's checkpoint (``errors``) and not fetched again by a later round of the run.
* Index — bring the admitted sources' passages into the BM25 index and check that every
  one has an embedding; passages that lack one are counted and reported, never papered
  over.
"""

from __future__ import annotations

import logging
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field

from django.db.models import Min

from ledger.models import Passage, SearchHit, SourceType
from ledger.services.ingest import document_from_fetch, ingest_documents
from ledger.services.library import do_get_web_capture_library
from ledger.services.search_hits import do_link_hits_to_source
from ledger.services.sparse_index import sync_sparse_index
from research.models import RunState, StageCheckpoint
from research.providers.fetcher import FetchOptions, FetchPool, FetchResult
from research.stages.base import StageContext

logger = logging.getLogger(__name__)
WAIT_S = 1.0  # the longest wait for a page before the next safe point (cancel, wall time)

WEB_SOURCE_TYPES = {
    "arxiv": SourceType.PREPRINT,
    "openalex": SourceType.PAPER,
    "wikipedia": SourceType.ENCYCLOPEDIA,
}


def admitted_before(ctx: StageContext) -> list[int]:
    """Source ids admitted by earlier rounds (a later round only adds to them)."""
    earlier = StageCheckpoint.objects.filter(
        run=ctx.run, stage=RunState.INGESTING, round__lt=ctx.round
    ).order_by("-round")
    first = earlier.first()
    return list(first.cursor.get("admitted", [])) if first else []


def ranked_canonical_ids(ctx: StageContext) -> list[str]:
    """Distinct canonical ids of the run's hits, best rank first (ties: first seen)."""
    rows = (
        SearchHit.objects.filter(run=ctx.run)
        .exclude(canonical_id="")
        .values("canonical_id")
        .annotate(best=Min("rank"), first=Min("id"))
        .order_by("best", "first")
    )
    return [row["canonical_id"] for row in rows]


def failed_before(ctx: StageContext) -> dict[str, str]:
    """URLs of this run that failed in an earlier round, with the reason (never refetched)."""
    earlier = StageCheckpoint.objects.filter(
        run=ctx.run, stage=RunState.INGESTING, round__lt=ctx.round
    ).order_by("round")
    return {url: why for cp in earlier for url, why in cp.cursor.get("errors", {}).items()}


def run(ctx: StageContext) -> None:
    """Admit the ranked sources, fetching the round's web pages concurrently.

    1. Walk the ranked canonical ids best first. A library hit (or a page a resumed
       stage ingested already) is admitted as found; a web hit's page is handed to a
       ``FetchPool`` (``FETCH_CONCURRENCY`` at once, ``FETCH_PER_HOST`` per host), so a
       slow page holds one slot while the others go on.
    2. No more pages are in flight than the budget has room for: each finished one is
       admitted or, failing, frees its slot for the next in rank. The admitted set is
       therefore the one a walk one page at a time would admit.
    3. A URL that failed in an earlier round of this run, or earlier in this round
       before a resume, is not fetched again; the notes say how many were passed over.
    """
    walk = _Walk(
        ctx,
        ranked=ranked_canonical_ids(ctx),
        earlier=admitted_before(ctx),
        failed_earlier=failed_before(ctx),
        budget=ctx.plan.budgets.documents,
    )
    ctx.progress(0, len(walk.ranked))
    with FetchPool(FetchOptions.from_settings()) as pool:
        walk.go(pool)
    walk.finish()


@dataclass
class _Walk:
    """One ingest stage's walk down the ranked sources (see :func:`run`)."""

    ctx: StageContext
    ranked: list[str]
    earlier: list[int]  # admitted by earlier rounds
    failed_earlier: dict[str, str]
    budget: int
    position: int = 0  # ranked[:position] have been taken up
    resolved: int = 0  # of those, the ones finished (admitted, failed or passed over)
    failed: int = 0
    passed_over: list[str] = field(default_factory=list)  # failed in an earlier round
    new: dict[int, int] = field(default_factory=dict)  # rank position -> source id
    in_flight: dict[Future[FetchResult], tuple[int, SearchHit]] = field(default_factory=dict)

    def admitted(self) -> list[int]:
        """Earlier rounds' sources, then this round's in rank order."""
        return self.earlier + [self.new[p] for p in sorted(self.new)]

    def go(self, pool: FetchPool) -> None:
        while True:
            self.take_up(pool)
            if not self.in_flight:
                return
            finished, _ = wait(self.in_flight, timeout=WAIT_S, return_when=FIRST_COMPLETED)
            self.ctx.safe_point()
            for future in finished:
                position, hit = self.in_flight.pop(future)
                self.resolve(position, ingest_page(self.ctx, hit, future))

    def take_up(self, pool: FetchPool) -> None:
        """Start on the next ranked sources while the budget has room for them."""
        while self.position < len(self.ranked) and self.room() > 0:
            position, canonical_id = self.position, self.ranked[self.position]
            self.position += 1
            known = _known_source(self.ctx, canonical_id)
            hit = None if known else _pending_hit(self.ctx, canonical_id)
            url = _url_of(hit) if hit else ""
            if known or hit is None:
                self.resolve(position, known)
            elif url in self.failed_earlier:
                self.passed_over.append(url)
                self.resolve(position, None, failed=False)
            elif url in self.ctx.cursor.get("errors", {}):  # failed before a resume
                self.resolve(position, None)
            else:
                self.in_flight[pool.submit(url)] = (position, hit)

    def room(self) -> int:
        return self.budget - len(self.earlier) - len(self.new) - len(self.in_flight)

    def resolve(self, position: int, source_id: int | None, *, failed: bool = True) -> None:
        self.resolved += 1
        if source_id is None and failed:
            self.failed += 1
        elif source_id is not None and source_id not in self.admitted():
            self.new[position] = source_id
        self.ctx.save_cursor(admitted=self.admitted(), done=self.resolved, total=len(self.ranked))

    def finish(self) -> None:
        ctx = self.ctx
        ctx.save_cursor(admitted=self.admitted())
        if self.position < len(self.ranked):
            ctx.note(
                "documents budget",
                f"the documents budget ({self.budget}) was reached; "
                f"{len(self.ranked) - self.position} more sources were found but not used",
            )
        if self.passed_over:
            last = self.passed_over[-1]
            ctx.note(
                "earlier fetch errors",
                f"{len(self.passed_over)} page(s) that could not be fetched or ingested in an "
                f"earlier round of this run were not fetched again "
                f"(last: {last}: {self.failed_earlier[last][:200]})",
            )
        ctx.count(
            admitted=len(self.admitted()),
            fetched=len(ctx.cursor.get("fetched", [])),
            fetch_failed=self.failed,
            fetch_skipped=len(self.passed_over),
        )


def _known_source(ctx: StageContext, canonical_id: str) -> int | None:
    """The Source a hit of this canonical id already has (a library hit, a page ingested)."""
    known = (
        SearchHit.objects.filter(run=ctx.run, canonical_id=canonical_id, source__isnull=False)
        .values_list("source_id", flat=True)
        .first()
    )
    return int(known) if known else None


def _pending_hit(ctx: StageContext, canonical_id: str) -> SearchHit | None:
    """The best-ranked hit of this canonical id whose page is still to be fetched."""
    pending = SearchHit.objects.filter(run=ctx.run, canonical_id=canonical_id, source__isnull=True)
    return pending.order_by("rank").first()


def _url_of(hit: SearchHit) -> str:
    return str(hit.record.get("url") or hit.canonical_id)


def ingest_page(ctx: StageContext, hit: SearchHit, fetched: Future[FetchResult]) -> int | None:
    """Ingest one hit's fetched page; any failure is recorded on the run and skipped.

    The fetcher tries a retryable failure (timeout, DNS, 5xx) again as the one HTTP
    retry policy says (``HTTP_MAX_ATTEMPTS``, a dead link costs seconds); a page that
    still fails, or fails to ingest, is written into the checkpoint's ``errors`` with
    the attempts made (shown on the run page; a later round does not fetch it again)
    and the stage goes on with the next source. One bad URL never fails or retries the
    stage.
    """
    url = _url_of(hit)
    try:
        doc = document_from_fetch(
            fetched.result(),
            label=url,
            title=str(hit.record.get("title") or ""),
            source_type=str(
                hit.record.get("source_type") or WEB_SOURCE_TYPES.get(hit.adapter, SourceType.WEB)
            ),
            doi=str(hit.record.get("doi") or ""),
            arxiv_id=str(hit.record.get("arxiv_id") or ""),
            metadata={"found_by": hit.adapter, "query": hit.query_text},
        )
        library = do_get_web_capture_library(ctx.run.plan_version.plan.code)
        outcome = ingest_documents([doc], library)[0]
    except Exception as exc:  # one page's failure must stay that page's
        logger.warning("run %s: skipped %s: %s", ctx.run.code, url, exc)
        _record_failure(ctx, url, str(exc) or type(exc).__name__)
        return None
    if outcome.source_id is None:
        _record_failure(ctx, url, outcome.error or outcome.status)
        return None
    do_link_hits_to_source(ctx.run, hit.canonical_id, outcome.source_id)
    ctx.save_cursor(fetched=[*ctx.cursor.get("fetched", []), hit.canonical_id])
    return int(outcome.source_id)


def _record_failure(ctx: StageContext, url: str, reason: str) -> None:
    errors = {**ctx.cursor.get("errors", {}), url: reason[:500]}
    ctx.save_cursor(errors=errors)
    ctx.note(
        "fetch errors",
        f"{len(errors)} page(s) could not be fetched or ingested and were skipped "
        f"(last: {url}: {reason[:200]})",
    )


def admitted_sources(ctx: StageContext) -> list[int]:
    """The sources this round may draw evidence from (set by this round's ingest stage)."""
    cp = ctx.earlier(RunState.INGESTING)
    return list(cp.cursor.get("admitted", [])) if cp else []


def index(ctx: StageContext) -> None:
    """Bring the admitted sources' passages into the BM25 index; count unembedded ones."""
    sources = admitted_sources(ctx)
    passages = Passage.objects.filter(source_id__in=sources, kind="chunk")
    total = passages.count()
    ids = list(Passage.objects.filter(source_id__in=sources).values_list("pk", flat=True))
    report = sync_sparse_index(passage_ids=ids) if ids else None
    ctx.count(bm25_indexed=report.indexed if report else 0)
    missing = passages.filter(embedding__isnull=True).count()
    ctx.progress(total - missing, total)
    ctx.count(passages=total, unembedded=missing)
    if missing:
        ctx.note(
            "unembedded passages",
            f"{missing} of {total} passages have no embedding; dense retrieval cannot find them",
        )
