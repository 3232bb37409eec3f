"""Mine stage: the run's findings, ranked by relevance, within the scope and the claim budget.

1. **load** — for every enabled subquestion, the top passages of the pools the retrieve
   stage saved (support and refute together: a counter-evidence subquestion has only a
   refute pool) as ``PassageInput`` (``ledger.readers.passage_inputs``), the queries it
   searched, its sources' texts (for their study design and population), the library's
   term statistics (idf), and the plan's scope parsed into filters and preferences;
2. **the pure step** — ``research.pipeline.claims.mine_run``: findings only, scored for
   relevance, scope applied, merged across sources and subquestions, the budget spent on
   the most relevant, contested pairs linked, gaps recorded (the LLM atomizer proposes
   the findings when a chat model is configured);
3. **save**, in one transaction — source profiles (``ledger.services.profiles``), claims
   and every candidate kept, merged or dropped with its reason
   (``ledger.services.claims.do_save_mining``), contested pairs
   (``ledger.services.contested``) and evidence gaps (``ledger.services.gaps``).

Mining is deterministic, so a stage a dead worker interrupted mines again and the
idempotent writers add nothing twice; a finished stage is not mined again.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from ledger.models import Claim, ContestedPair, EvidenceGap
from ledger.readers import (
    candidate_counts,
    neighbour_passages,
    passage_inputs,
    source_texts,
    superseded_passages,
    term_idf,
)
from ledger.services.claims import do_save_mining
from ledger.services.contested import do_record_contested
from ledger.services.gaps import do_record_gaps
from ledger.services.profiles import do_save_source_profiles
from research.models import Run, Subquestion
from research.pipeline.claims import MineConfig, RunInput, RunMining, SubquestionInput, mine_run
from research.pipeline.claims.atomize import llm_proposals
from research.pipeline.claims.design import profile_source
from research.pipeline.claims.relevance import Encode, terms
from research.pipeline.claims.scope import Scope, parse_scope
from research.pipeline.retrieve.records import EvidencePools
from research.providers.llm import LLMClient
from research.stages.base import StageContext
from research.stages.retrieve import issued_queries, pools_of

MINE_TOP_PASSAGES = 8
MINE_NEIGHBOURS = 12  # more passages of the retrieved documents, nearest first


def run(ctx: StageContext) -> None:
    if not ctx.cursor.get("saved"):
        ctx.progress(0, 1)
        ctx.safe_point(wall_time=False)
        inp = load(ctx)
        encode, why = encoder()
        if why:
            ctx.note("relevance", why)
        mining = mine_run(inp, config(ctx), encode, propose())
        save(ctx.run, mining)
        ctx.save_cursor(saved=True, scope=inp.scope.to_json(), done=1, total=1)
        for key, text in mining.notes.items():
            ctx.note(key, text)
    count(ctx)


def config(ctx: StageContext) -> MineConfig:
    return MineConfig(max_run_claims=ctx.plan.budgets.claims)


def load(ctx: StageContext) -> RunInput:
    """Everything the pure step needs, as records."""
    pools = pools_of(ctx)
    searched: dict[str, list[str]] = {}
    for query in issued_queries(ctx):
        searched.setdefault(query.subquestion, []).append(query.text)
    subquestions = []
    for sq in ctx.plan.subquestions:
        if not sq.enabled:
            continue
        passages = top_passages(pools.get(sq.key, EvidencePools()))
        queries = tuple(dict.fromkeys(searched.get(sq.key, [])))
        subquestions.append(
            SubquestionInput(sq.key, sq.text, passages, queries, sq.priority, sq.dimension)
        )
    keys = {p.source_key for sq in subquestions for p in sq.passages if p.source_key}
    profiles = {s.canonical_id: profile_source(s.title, s.text, s.year) for s in source_texts(keys)}
    question = ctx.plan.question
    wanted = terms(question).union(*(terms(sq.text) for sq in subquestions))
    return RunInput(
        question=question,
        subquestions=tuple(subquestions),
        scope=scope_of(ctx.run),
        profiles=profiles,
        idf=term_idf(wanted),
    )


def scope_of(run: Run) -> Scope:
    """The scope as it was when the run started (recorded in its config)."""
    return parse_scope(str(run.config.get("scope", run.plan_version.plan.scope)))


def top_passages(pools: EvidencePools) -> tuple[Any, ...]:
    """The best passages of both pools by fused score (a passage once), from each source's
    latest snapshot only (a re-ingested source's old text is not mined again), then up to
    ``MINE_NEIGHBOURS`` passages beside them in their documents, nearest first
    (:func:`ledger.readers.neighbour_passages`: the passage a search finds is often a
    document's background, and its finding a passage or two on)."""
    best: dict[int, float] = {}
    for hit in [*pools.support, *pools.refute]:
        best[hit.passage_id] = max(best.get(hit.passage_id, 0.0), hit.score)
    for stale in superseded_passages(best):
        del best[stale]
    ranked = dict(sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:MINE_TOP_PASSAGES])
    for near in neighbour_passages(list(ranked), MINE_NEIGHBOURS):
        ranked.setdefault(near, 0.0)
    return tuple(passage_inputs(ranked))


def encoder() -> tuple[Encode | None, str]:
    """The sentence encoder for dense relevance, or None and why."""
    from research.providers.embedder import Embedder, EmbedderUnavailable

    embedder = Embedder.from_settings()
    try:
        embedder.encode(["probe"])
    except EmbedderUnavailable as exc:
        return None, f"no sentence encoder ({exc}): relevance is lexical only"
    return embedder.encode, ""


def propose() -> Any:
    """The LLM atomizer when a chat model is configured, else the rule-based miner."""
    client = LLMClient.from_settings()
    return llm_proposals(client) if client else None


def save(run: Run, mining: RunMining) -> list[Claim]:
    subquestions = {
        sq.key: sq for sq in Subquestion.objects.filter(plan_version_id=run.plan_version_id)
    }
    with transaction.atomic():
        do_save_source_profiles(mining.profiles)
        saved = do_save_mining(run, mining.results, subquestions)
        do_record_contested(run, mining.contested)
        do_record_gaps(run, mining.gaps, subquestions)
    return saved


def count(ctx: StageContext) -> None:
    counts = candidate_counts(ctx.run)
    ctx.count(
        claims=Claim.objects.filter(run=ctx.run).count(),
        candidates=counts.pop("total"),
        contested_pairs=ContestedPair.objects.filter(run=ctx.run).count(),
        evidence_gaps=EvidenceGap.objects.filter(run=ctx.run).count(),
        **{f"candidates_{state}": n for state, n in counts.items()},
    )
    ctx.progress(1, 1)


def mine_subquestion(run: Run, subquestion_key: str, pools: EvidencePools) -> list[Claim]:
    """One subquestion mined alone (tests and re-mining): the same steps, its passages only."""
    from research.pipeline.records import parse_plan

    plan = parse_plan(run.plan_version.content)
    sq = next(s for s in plan.subquestions if s.key == subquestion_key)
    inp = RunInput(
        question=plan.question,
        subquestions=(
            SubquestionInput(sq.key, sq.text, top_passages(pools), (), sq.priority, sq.dimension),
        ),
        scope=scope_of(run),
    )
    encode, _ = encoder()
    return save(run, mine_run(inp, MineConfig(max_run_claims=plan.budgets.claims), encode))
