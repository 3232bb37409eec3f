"""Search stage: each planned query (or follow-up) against the plan's library and web adapters.

Round 0 issues the plan's enabled queries, highest priority first, within the query
budget of the plan and of each subquestion; a later round issues the follow-ups that
best-first expansion chose. Every result becomes a SearchHit (unique per run, query
text, adapter and rank), so a resumed stage rewrites nothing it already wrote.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ledger.models import Library
from ledger.services.library import plan_may_search
from ledger.services.search_hits import do_record_search_hits
from ledger.services.sparse_index import sync_sparse_index
from research.models import RunState, StageCheckpoint
from research.pipeline.retrieve.rerank import RANKING_NOTES
from research.stages import adapters
from research.stages.base import StageContext


@dataclass(frozen=True)
class PlannedQuery:
    key: str
    text: str
    query_class: str
    subquestion: str
    source_classes: list[str] = field(default_factory=list)
    reason: str = ""  # why a follow-up was issued (empty for plan queries)


def plan_queries(ctx: StageContext) -> list[PlannedQuery]:
    """Round 0: the enabled plan queries, by subquestion then query priority."""
    ranked = sorted(
        (
            (-sq.priority, s_pos, -q.priority, q_pos, sq, q)
            for s_pos, sq in enumerate(ctx.plan.subquestions)
            if sq.enabled
            for q_pos, q in enumerate(sq.queries)
            if q.enabled
        ),
        key=lambda item: item[:4],
    )
    return [
        PlannedQuery(
            q.key, q.text, q.query_class, sq.key, q.source_classes or ctx.plan.source_classes
        )
        for *_, sq, q in ranked
    ]


def followups(ctx: StageContext) -> list[PlannedQuery]:
    """Round n: the follow-ups the retrieval stage of round n-1 chose."""
    decided = StageCheckpoint.objects.filter(
        run=ctx.run, stage=RunState.RETRIEVING, round=ctx.round - 1
    ).first()
    chosen = decided.cursor.get("followups", []) if decided else []
    return [PlannedQuery(**item) for item in chosen]


def issued_before(ctx: StageContext) -> dict[str, int]:
    """Queries issued in earlier rounds, per subquestion key."""
    counts: dict[str, int] = {}
    for cp in StageCheckpoint.objects.filter(
        run=ctx.run, stage=RunState.SEARCHING, round__lt=ctx.round
    ):
        for sq_key, n in cp.cursor.get("per_subquestion", {}).items():
            counts[sq_key] = counts.get(sq_key, 0) + n
    return counts


def within_budget(ctx: StageContext, queries: list[PlannedQuery]) -> list[PlannedQuery]:
    """Drop queries over the plan's or a subquestion's budget, saying how many."""
    before = issued_before(ctx)
    left = ctx.plan.budgets.queries - sum(before.values())
    per_sq = {sq.key: sq.budget - before.get(sq.key, 0) for sq in ctx.plan.subquestions}
    kept: list[PlannedQuery] = []
    dropped = {"plan": 0, "subquestion": 0}
    for q in queries:
        if left <= 0:
            dropped["plan"] += 1
        elif per_sq.get(q.subquestion, 0) <= 0:
            dropped["subquestion"] += 1
        else:
            kept.append(q)
            left -= 1
            per_sq[q.subquestion] -= 1
    if dropped["plan"]:
        ctx.note(
            "query budget",
            f"the plan's query budget ({ctx.plan.budgets.queries}) left {dropped['plan']} "
            "queries unissued",
        )
    if dropped["subquestion"]:
        ctx.note(
            "subquestion budget",
            f"{dropped['subquestion']} queries over their subquestion's budget",
        )
    return kept


def run(ctx: StageContext) -> None:
    """Issue this round's queries, resuming after the last query a cursor recorded."""
    queries = plan_queries(ctx) if ctx.round == 0 else followups(ctx)
    if "planned" not in ctx.cursor:
        queries = within_budget(ctx, queries)
        per_sq: dict[str, int] = {}
        for q in queries:
            per_sq[q.subquestion] = per_sq.get(q.subquestion, 0) + 1
        ctx.save_cursor(planned=[asdict(q) for q in queries], per_subquestion=per_sq, done_keys=[])
    planned = [PlannedQuery(**item) for item in ctx.cursor["planned"]]
    library = searchable_library(ctx)
    if library is not None and "bm25_checked" not in ctx.cursor:
        _complete_bm25_index(ctx, library)
    available = adapters.search_adapters(library)
    done: list[str] = list(ctx.cursor.get("done_keys", []))
    ctx.progress(len(done), len(planned))
    for q in planned:
        if q.key in done:
            continue
        ctx.safe_point()
        hits = _search_one(ctx, q, library, available)
        done.append(q.key)
        ctx.save_cursor(done_keys=done, done=len(done), total=len(planned))
        ctx.count(hits=ctx.checkpoint.counters.get("hits", 0) + hits)
    ctx.count(issued=len(done))


def _complete_bm25_index(ctx: StageContext, library: Library) -> None:
    """Index the library's passages the BM25 index misses before searching it (stored by an
    import older than the index, or copied from another database): a hybrid search of a
    half-indexed library is dense search in all but name. A no-op once complete."""
    report = sync_sparse_index(library)
    if report.indexed:
        ctx.note(
            "bm25 index",
            f"{report.indexed} passages of the library {library.name!r} were missing from "
            "the BM25 index and were indexed before searching",
        )
    ctx.save_cursor(bm25_checked=True)


def searchable_library(ctx: StageContext) -> Library | None:
    """The plan's library, unless its owner may no longer read it (then said so)."""
    plan = ctx.run.plan_version.plan
    library = plan.library
    if library is not None and not plan_may_search(plan, library):
        ctx.note(
            "library",
            f"not searched: the plan's owner may no longer read the library {library.name!r}",
        )
        return None
    return library


def _search_one(
    ctx: StageContext, q: PlannedQuery, library: Library | None, available: adapters.Available
) -> int:
    limit = ctx.plan.budgets.hits_per_query
    total = 0
    for adapter in available.for_classes(q.source_classes):
        found = adapter.search(q.text, q.query_class, limit)
        total += do_record_search_hits(
            ctx.run, query_key=q.key, query_text=q.text, adapter=adapter.name, hits=found
        )
        for key, text in adapter.notes.items():
            # The ranking (and a missing reranker) is the retrieving stage's note: one
            # place per run, not one per searching round.
            if key not in RANKING_NOTES and ctx.checkpoint.notes.get(key) != text:
                ctx.note(key, text)
        if adapter.errors:
            ctx.note(
                f"{adapter.name} errors",
                f"{len(adapter.errors)} failed queries; last: {adapter.errors[-1]}",
            )
    return total
