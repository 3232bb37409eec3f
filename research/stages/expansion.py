"""Best-first expansion: after a search round, follow up where evidence is weak or one-sided.

Each enabled subquestion's pools are assessed:

* **weak** — fewer than ``MIN_SOURCES`` distinct sources have a *relevant* passage
  (one that contains at least half of the subquestion's content words);
* **one-sided** — no relevant passage carries a qualifying cue (a negation, a null
  result, a limitation or a contrast), so nothing found so far questions it.

Weak and one-sided subquestions, highest priority first, get targeted follow-up
queries (:func:`research.pipeline.planner.followup_queries`) within the query budget,
the subquestion's budget and the round budget. Collection stops, with the reason
recorded on the run, when the rounds or queries are spent, the wall time is up, the
last round added little new evidence, duplicates dominated its results, or no
subquestion needs more.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ledger.models import Passage, SearchHit
from research.models import RunState, StageCheckpoint
from research.pipeline.language.verdict_cues import QUALIFYING
from research.pipeline.planner import followup_queries, keywords
from research.pipeline.records import SubquestionSpec, normalize_query
from research.pipeline.retrieve.records import EvidencePools
from research.services.runs import do_add_stop_reason
from research.stages.base import StageContext
from research.stages.retrieve import pools_of, pools_of_checkpoint
from research.stages.search import PlannedQuery, issued_before

MIN_SOURCES = 2
MIN_NEW_SHARE = 0.10  # a round that adds less than this share of new passages is the last
MAX_DUPLICATE_SHARE = 0.80  # a round whose hits are mostly already-known sources is the last
FOLLOWUPS_PER_NODE = 2


@dataclass(frozen=True)
class Assessment:
    relevant_sources: int
    qualifying_passages: int
    weak: bool
    one_sided: bool


def _stems(text: str) -> set[str]:
    return {w[:5] for w in normalize_query(keywords(text)).split() if len(w) > 2}


def assess(sq: SubquestionSpec, pool: EvidencePools, texts: dict[int, str]) -> Assessment:
    terms = _stems(sq.text)
    need = max(1, (len(terms) + 1) // 2)
    sources: set[int] = set()
    qualifying = 0
    for item in pool.hits():
        text = texts.get(item.passage_id, "")
        if len(terms & _stems(text)) < need:
            continue
        sources.add(item.source_id)
        qualifying += bool(QUALIFYING.search(text))
    return Assessment(
        relevant_sources=len(sources),
        qualifying_passages=qualifying,
        weak=len(sources) < MIN_SOURCES,
        one_sided=qualifying == 0,
    )


def _passage_texts(pools: dict[str, EvidencePools]) -> dict[int, str]:
    return dict(Passage.objects.filter(pk__in=_pool_ids(pools)).values_list("pk", "text"))


def _pool_ids(pools: dict[str, EvidencePools]) -> set[int]:
    return {hit.passage_id for pool in pools.values() for hit in pool.hits()}


def stop_reasons(ctx: StageContext, pools: dict[str, EvidencePools]) -> list[str]:
    """Why collection should end now (empty when another round may run)."""
    budgets = ctx.plan.budgets
    reasons = []
    if ctx.round > 0:
        before = _pool_ids(pools_of(ctx, ctx.round - 1))
        now = _pool_ids(pools)
        new = len(now - before)
        if now and new / len(now) < MIN_NEW_SHARE:
            reasons.append(
                f"marginal new evidence is low: round {ctx.round} added {new} new passages "
                f"of {len(now)} ({new / len(now):.0%})"
            )
        share = duplicate_share(ctx)
        if share > MAX_DUPLICATE_SHARE:
            reasons.append(
                f"duplicates dominate: {share:.0%} of round {ctx.round}'s hits were sources "
                "already found"
            )
    if ctx.round >= budgets.rounds:
        reasons.append(f"the follow-up round budget ({budgets.rounds}) is spent")
    if sum(issued_before(ctx).values()) + _issued_now(ctx) >= budgets.queries:
        reasons.append(f"the query budget ({budgets.queries}) is spent")
    if ctx.wall_time_left_s() <= 0:
        reasons.append(f"the wall-time budget ({ctx.wall_time_budget_s} s) is spent")
    return reasons


def _issued_now(ctx: StageContext) -> int:
    cp = ctx.earlier(RunState.SEARCHING)
    return len(cp.cursor.get("done_keys", [])) if cp else 0


def duplicate_share(ctx: StageContext) -> float:
    """Share of this round's hits whose source an earlier round had already found."""
    this_round = _round_query_texts(ctx, ctx.round)
    earlier = {t for r in range(ctx.round) for t in _round_query_texts(ctx, r)}
    hits = SearchHit.objects.filter(run=ctx.run).exclude(canonical_id="")
    now = list(hits.filter(query_text__in=this_round).values_list("canonical_id", flat=True))
    seen = set(hits.filter(query_text__in=earlier).values_list("canonical_id", flat=True))
    return sum(c in seen for c in now) / len(now) if now else 1.0


def _round_query_texts(ctx: StageContext, round_no: int) -> set[str]:
    cp = StageCheckpoint.objects.filter(
        run=ctx.run, stage=RunState.SEARCHING, round=round_no
    ).first()
    return {q["text"] for q in cp.cursor.get("planned", [])} if cp else set()


def decide(ctx: StageContext) -> bool:
    """Choose follow-ups for the next round (True) or end collection (False), saying why."""
    pools = pools_of_checkpoint(ctx.checkpoint)
    texts = _passage_texts(pools)
    assessments = {
        sq.key: assess(sq, pools.get(sq.key, EvidencePools()), texts)
        for sq in ctx.plan.subquestions
        if sq.enabled
    }
    ctx.save_cursor(assessment={k: asdict(v) for k, v in assessments.items()})
    ctx.count(
        weak=sum(a.weak for a in assessments.values()),
        one_sided=sum(a.one_sided for a in assessments.values()),
    )
    if not pools:
        return _end(ctx, "no evidence pools were retrieved")
    reasons = stop_reasons(ctx, pools)
    if reasons:
        return _end(ctx, "; ".join(reasons))
    chosen = choose_followups(ctx, assessments)
    if not chosen:
        return _end(ctx, "no subquestion has weak or one-sided evidence left to follow up")
    ctx.save_cursor(followups=[asdict(q) for q in chosen])
    ctx.note(
        "expansion",
        f"round {ctx.round + 1}: {len(chosen)} follow-up queries for "
        + ", ".join(sorted({q.subquestion for q in chosen})),
    )
    return True


def choose_followups(ctx: StageContext, assessments: dict[str, Assessment]) -> list[PlannedQuery]:
    budgets = ctx.plan.budgets
    used = issued_before(ctx)
    cp = ctx.earlier(RunState.SEARCHING)
    for sq_key, n in (cp.cursor.get("per_subquestion", {}) if cp else {}).items():
        used[sq_key] = used.get(sq_key, 0) + n
    left = budgets.queries - sum(used.values())
    issued = {normalize_query(q.text) for _, q in ctx.plan.enabled_queries()}
    issued |= {normalize_query(t) for r in range(ctx.round + 1) for t in _round_query_texts(ctx, r)}
    chosen: list[PlannedQuery] = []
    nodes = sorted(
        (sq for sq in ctx.plan.subquestions if sq.key in assessments),
        key=lambda sq: -sq.priority,
    )
    for sq in nodes:
        a = assessments[sq.key]
        room = min(FOLLOWUPS_PER_NODE, sq.budget - used.get(sq.key, 0), left - len(chosen))
        if room <= 0 or not (a.weak or a.one_sided):
            continue
        for f in followup_queries(
            sq,
            ctx.plan.question,
            weak=a.weak,
            one_sided=a.one_sided,
            issued=issued,
            limit=room,
            round_no=ctx.round + 1,
        ):
            source_classes = sorted({c for q in sq.queries for c in q.source_classes})
            chosen.append(
                PlannedQuery(
                    f.key,
                    f.text,
                    f.query_class,
                    sq.key,
                    source_classes or ctx.plan.source_classes,
                    f.reason,
                )
            )
    return chosen


def _end(ctx: StageContext, reason: str) -> bool:
    text = f"Evidence collection ended after round {ctx.round}: {reason}."
    ctx.note("expansion", text)
    do_add_stop_reason(ctx.run, text)  # a retried stage does not say it twice
    return False
