"""Ingest and index stages: admit the run's sources within the documents budget.

* Ingest — rank the distinct sources the run's hits point at (best rank first), admit
  at most ``budgets.documents`` of them, and fetch + ingest web hits that have no
  Source yet (through the fetcher and ``ledger.services.ingest``, keyed by content
  hash, so a resumed stage re-ingests nothing). Library hits already have sources.
* Index — bring the admitted sources' passages into the BM25 index and check that every
  one has an embedding; passages that lack one are counted and reported, never papered
  over.
"""

from __future__ import annotations

import logging

from django.db.models import Min, QuerySet

from ledger.models import Passage, SearchHit, SourceType
from ledger.services.ingest import document_from_fetch, ingest_documents
from ledger.services.library import do_get_web_capture_library
from ledger.services.search_hits import do_link_hits_to_source
from ledger.services.sparse_index import sync_sparse_index
from research.models import RunState, StageCheckpoint
from research.providers.fetcher import fetch_url_sync
from research.stages.base import RunCancelled, StageContext, WallTimeExhausted

logger = logging.getLogger(__name__)

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


def run(ctx: StageContext) -> None:
    admitted = admitted_before(ctx)
    budget = ctx.plan.budgets.documents
    pending = SearchHit.objects.filter(run=ctx.run, source__isnull=True).exclude(canonical_id="")
    ranked = ranked_canonical_ids(ctx)
    ctx.progress(0, len(ranked))
    failed = 0
    for done, canonical_id in enumerate(ranked, start=1):
        if len(admitted) >= budget:
            ctx.note(
                "documents budget",
                f"the documents budget ({budget}) was reached; "
                f"{len(ranked) - done + 1} more sources were found but not used",
            )
            break
        source_id = _source_for(ctx, canonical_id, pending)
        if source_id is None:
            failed += 1
        elif source_id not in admitted:
            admitted.append(source_id)
        ctx.save_cursor(admitted=admitted, done=done, total=len(ranked))
    ctx.save_cursor(admitted=admitted)
    ctx.count(
        admitted=len(admitted), fetched=len(ctx.cursor.get("fetched", [])), fetch_failed=failed
    )


def _source_for(ctx: StageContext, canonical_id: str, pending: QuerySet[SearchHit]) -> int | None:
    """The admitted Source of a canonical id, fetching and ingesting a web page once."""
    known = (
        SearchHit.objects.filter(run=ctx.run, canonical_id=canonical_id, source__isnull=False)
        .values_list("source_id", flat=True)
        .first()
    )
    if known:
        return int(known)
    hit = pending.filter(canonical_id=canonical_id).order_by("rank").first()
    if hit is None:
        return None
    ctx.safe_point()
    return _fetch_and_ingest(ctx, hit)


def _fetch_and_ingest(ctx: StageContext, hit: SearchHit) -> int | None:
    """Fetch and ingest one hit's page; any failure is recorded on the run and skipped.

    The fetcher tries a retryable failure (timeout, DNS, 5xx) again as the one HTTP
    retry policy says (``HTTP_MAX_ATTEMPTS``, a dead link costs seconds); a page that
    still fails, or fails to ingest, is written into the checkpoint's ``errors`` with
    the attempts made (shown on the run page) and the stage goes on with the next
    source. One bad URL never fails or retries the stage.
    """
    url = str(hit.record.get("url") or hit.canonical_id)
    try:
        result = fetch_url_sync(url)
        doc = document_from_fetch(
            result,
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
    except (RunCancelled, WallTimeExhausted):
        raise
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
