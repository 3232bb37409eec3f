"""Retrieve stage: per subquestion, a support pool and a refute pool of passages.

Every query issued so far for a subquestion is run through the production retrieval
path (``research.retrieval``) at passage level over the plan's library and its web
captures, restricted to the sources the ingest stage admitted. Counter-evidence and
limitation queries feed the refute pool, the others the support pool; within a pool,
passages found by several queries are fused by reciprocal rank. The pools are saved
in the checkpoint's cursor, subquestion by subquestion, so mining can read them and a
resumed stage skips the subquestions it finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from ledger.models import Library
from research.models import RunState, StageCheckpoint, StageStatus
from research.stages.adapters import optional_module
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


def library_ids(ctx: StageContext) -> tuple[int, ...]:
    plan = ctx.run.plan_version.plan
    ids = [plan.library_id] if plan.library_id else []
    web = Library.objects.filter(name=f"web captures of plan {plan.code}").first()
    if web:
        ids.append(web.pk)
    return tuple(ids)


def _fuse(found: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Reciprocal rank fusion of several ranked lists of passages."""
    k = settings.RETRIEVAL_RRF_K
    fused: dict[int, dict[str, Any]] = {}
    for ranked in found:
        for rank, item in enumerate(ranked, start=1):
            entry = fused.setdefault(item["passage_id"], {**item, "score": 0.0})
            entry["score"] += 1.0 / (k + rank)
    return sorted(fused.values(), key=lambda e: (-e["score"], e["passage_id"]))[:POOL_SIZE]


def _retrieve(
    retrieval: Any,
    text: str,
    query_class: str,
    libraries: tuple[int, ...],
    admitted: set[int],
    notes: dict[str, str],
) -> list[dict[str, Any]]:
    from research.pipeline.retrieve.records import Filters, RetrievalRequest

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
    return [
        {"passage_id": h.passage_id, "source_id": h.source_id}
        for h in result.hits
        if h.source_id in admitted
    ]


def run(ctx: StageContext) -> None:
    retrieval = optional_module("research.retrieval")
    if retrieval is None or not hasattr(retrieval, "retrieve"):
        ctx.note("retrieval", "hybrid retrieval is not available in this build")
        ctx.save_cursor(pools={})
        return
    queries = issued_queries(ctx)
    admitted = set(admitted_sources(ctx))
    libraries = library_ids(ctx)
    subquestions = [sq for sq in ctx.plan.subquestions if sq.enabled]
    pools: dict[str, Any] = dict(ctx.cursor.get("pools", {}))
    notes: dict[str, str] = {}
    ctx.progress(len(pools), len(subquestions))
    for sq in subquestions:
        if sq.key in pools:
            continue
        ctx.safe_point()
        mine = [q for q in queries if q.subquestion == sq.key]
        support = [
            _retrieve(retrieval, q.text, q.query_class, libraries, admitted, notes)
            for q in mine
            if q.query_class not in REFUTE_CLASSES
        ]
        refute = [
            _retrieve(retrieval, q.text, q.query_class, libraries, admitted, notes)
            for q in mine
            if q.query_class in REFUTE_CLASSES
        ]
        pools[sq.key] = {"support": _fuse(support), "refute": _fuse(refute)}
        ctx.save_cursor(pools=pools, done=len(pools), total=len(subquestions))
    for key, text in notes.items():
        ctx.note(key, text)
    distinct = {p["passage_id"] for pool in pools.values() for side in pool.values() for p in side}
    ctx.count(evidence_passages=len(distinct))


def pools_of(ctx: StageContext, round_no: int | None = None) -> dict[str, Any]:
    """The pools the retrieve stage saved (this round, or the latest one done)."""
    qs = StageCheckpoint.objects.filter(run=ctx.run, stage=RunState.RETRIEVING)
    if round_no is not None:
        qs = qs.filter(round=round_no)
    else:
        qs = qs.filter(status=StageStatus.DONE).order_by("-round")
    cp = qs.first()
    return dict(cp.cursor.get("pools", {})) if cp else {}
