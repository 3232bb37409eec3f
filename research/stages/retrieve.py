"""Retrieve stage: per subquestion, a support pool and a refute pool of passages.

Every query issued so far for a subquestion is run through the production retrieval
path (``research.retrieval``) at passage level over the plan's library and its web
captures, restricted to the sources the ingest stage admitted. Counter-evidence and
limitation queries feed the refute pool, the others the support pool; within a pool,
passages found by several queries are fused by reciprocal rank. The pools are saved
in the checkpoint's cursor (``EvidencePools`` as JSON), subquestion by subquestion, so
mining can read them and a resumed stage skips the subquestions it finished.

:func:`library_retrieve` is the same retrieval for one claim's counter queries.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from ledger.readers import context_items
from ledger.services.library import plan_library_ids
from research import retrieval
from research.models import Run, RunState, StageCheckpoint, StageStatus
from research.pipeline.counter import Retrieve
from research.pipeline.retrieve.records import (
    EvidencePools,
    Filters,
    PooledHit,
    RetrievalRequest,
)
from research.pipeline.retrieve.rerank import ranking_notes
from research.pipeline.verify.records import EvidenceItem
from research.stages.base import StageContext
from research.stages.ingest import admitted_sources

REFUTE_CLASSES = {"counter-evidence", "limitation"}
POOL_SIZE = 8
PER_QUERY = 20


@dataclass(frozen=True)
class IssuedQuery:
    subquestion: str
    text: str
    query_class: str


def issued_queries(ctx: StageContext) -> list[IssuedQuery]:
    """The queries searched so far in this run (all rounds up to this one)."""
    out: list[IssuedQuery] = []
    for cp in StageCheckpoint.objects.filter(
        run=ctx.run, stage=RunState.SEARCHING, round__lte=ctx.round
    ).order_by("round"):
        done = set(cp.cursor.get("done_keys", []))
        out += [
            IssuedQuery(q["subquestion"], q["text"], q["query_class"])
            for q in cp.cursor.get("planned", [])
            if q["key"] in done
        ]
    return out


def library_ids(run: Run) -> tuple[int, ...]:
    """The plan's library (when its owner may read it) and the plan's web captures.

    Empty means the run may read no library at all, so it retrieves nothing: an empty
    ``Filters.library_ids`` would mean *every* library to the retrieval path.
    """
    return plan_library_ids(run.plan_version.plan)


def _fuse(found: list[list[PooledHit]]) -> tuple[PooledHit, ...]:
    """Reciprocal rank fusion of several ranked lists of passages."""
    k = settings.RETRIEVAL_RRF_K
    fused: dict[int, PooledHit] = {}
    scores: dict[int, float] = {}
    for ranked in found:
        for rank, item in enumerate(ranked, start=1):
            fused.setdefault(item.passage_id, item)
            scores[item.passage_id] = scores.get(item.passage_id, 0.0) + 1.0 / (k + rank)
    order = sorted(fused, key=lambda pid: (-scores[pid], pid))[:POOL_SIZE]
    return tuple(PooledHit(pid, fused[pid].source_id, scores[pid]) for pid in order)


def _retrieve(
    text: str,
    query_class: str,
    libraries: tuple[int, ...],
    admitted: set[int],
    notes: dict[str, str],
) -> list[PooledHit]:
    if not libraries:
        return []
    request = RetrievalRequest(
        text=text,
        limit=PER_QUERY,
        level="passage",
        query_class=query_class,
        filters=Filters(library_ids=libraries),
        diversity=retrieval.default_diversity(),
    )
    result = retrieval.retrieve(request)
    notes.update(result.notes)
    return [PooledHit(h.passage_id, h.source_id) for h in result.hits if h.source_id in admitted]


def run(ctx: StageContext) -> None:
    queries = issued_queries(ctx)
    admitted = set(admitted_sources(ctx))
    libraries = library_ids(ctx.run)
    subquestions = [sq for sq in ctx.plan.subquestions if sq.enabled]
    pools = pools_of_checkpoint(ctx.checkpoint)
    notes: dict[str, str] = {}
    ctx.progress(len(pools), len(subquestions))
    for sq in subquestions:
        if sq.key in pools:
            continue
        ctx.safe_point()
        mine = [q for q in queries if q.subquestion == sq.key]
        support = [
            _retrieve(q.text, q.query_class, libraries, admitted, notes)
            for q in mine
            if q.query_class not in REFUTE_CLASSES
        ]
        refute = [
            _retrieve(q.text, q.query_class, libraries, admitted, notes)
            for q in mine
            if q.query_class in REFUTE_CLASSES
        ]
        pools[sq.key] = EvidencePools(support=_fuse(support), refute=_fuse(refute))
        ctx.save_cursor(
            pools={key: pool.to_json() for key, pool in pools.items()},
            done=len(pools),
            total=len(subquestions),
        )
    for key, text in ranking_notes(notes).items():
        ctx.note(key, text)
    distinct = {hit.passage_id for pool in pools.values() for hit in pool.hits()}
    ctx.count(evidence_passages=len(distinct))


def pools_of_checkpoint(cp: StageCheckpoint | None) -> dict[str, EvidencePools]:
    """The pools a retrieve checkpoint saved, per subquestion key."""
    saved = cp.cursor.get("pools", {}) if cp else {}
    return {key: EvidencePools.from_json(pool) for key, pool in saved.items()}


def pools_of(ctx: StageContext, round_no: int | None = None) -> dict[str, EvidencePools]:
    """The pools the retrieve stage saved (this round, or the latest one done)."""
    qs = StageCheckpoint.objects.filter(run=ctx.run, stage=RunState.RETRIEVING)
    if round_no is not None:
        qs = qs.filter(round=round_no)
    else:
        qs = qs.filter(status=StageStatus.DONE).order_by("-round")
    return pools_of_checkpoint(qs.first())


def library_retrieve(run: Run) -> Retrieve:
    """Passage retrieval over the run's libraries, as evidence items in their context."""
    ids = library_ids(run)

    def retrieve(text: str, k: int) -> list[EvidenceItem]:
        if not ids:
            return []
        request = RetrievalRequest(text=text, limit=k, filters=Filters(library_ids=ids))
        return context_items(retrieval.retrieve(request).hits)

    return retrieve
