"""Mine stage: atomic claims from each subquestion's top support passages.

Subquestion by subquestion: load the top passages of the support pool the retrieve
stage saved (``ledger.readers.passage_inputs``), mine them with the pure miner
(``research.pipeline.claims``: the offline rules, or the LLM atomizer when one is
configured), and save the result (``ledger.services.claims.do_save_claims``). Claims are
unique per run and fingerprint, so a resumed stage adds none twice; every candidate the
miner produced is recorded as kept, merged or dropped with its reason.
"""

from __future__ import annotations

from ledger.models import Claim
from ledger.readers import candidate_counts, passage_inputs
from ledger.services.claims import do_save_claims
from research.models import Run, Subquestion
from research.pipeline.claims import (
    MineConfig,
    MiningResult,
    PassageInput,
    mine_claims,
    mine_claims_llm,
)
from research.pipeline.retrieve.records import EvidencePools
from research.providers.llm import LLMClient
from research.stages.base import StageContext
from research.stages.retrieve import pools_of

MINE_TOP_PASSAGES = 8


def run(ctx: StageContext) -> None:
    pools = pools_of(ctx)
    subquestions = [sq for sq in ctx.plan.subquestions if sq.enabled and sq.key in pools]
    done: list[str] = list(ctx.cursor.get("done_subquestions", []))
    ctx.progress(len(done), len(subquestions))
    run_claims = Claim.objects.filter(run=ctx.run)
    for sq in subquestions:
        if sq.key in done:
            continue
        ctx.safe_point(wall_time=False)
        mine_subquestion(ctx.run, sq.key, pools[sq.key])
        done.append(sq.key)
        ctx.save_cursor(done_subquestions=done, done=len(done), total=len(subquestions))
        # one claim per proposition: a merge across subquestions adds evidence, not a claim
        counts = candidate_counts(ctx.run)
        ctx.count(
            claims=run_claims.count(),
            candidates=counts.pop("total"),
            **{f"candidates_{state}": n for state, n in counts.items()},
        )


def mine_subquestion(run: Run, subquestion_key: str, pools: EvidencePools) -> list[Claim]:
    """1. load the top support passages, 2. mine them, 3. save claims and candidates."""
    subquestion = Subquestion.objects.filter(
        plan_version_id=run.plan_version_id, key=subquestion_key
    ).first()
    ranked = sorted(pools.support, key=lambda hit: -hit.score)[:MINE_TOP_PASSAGES]
    passages = passage_inputs({hit.passage_id: hit.score for hit in ranked})
    result = mine(passages, MineConfig(focus=subquestion.text if subquestion else ""))
    return do_save_claims(run, result, subquestion)


def mine(passages: list[PassageInput], cfg: MineConfig) -> MiningResult:
    """The LLM atomizer when a chat model is configured, else the offline miner."""
    client = LLMClient.from_settings()
    return mine_claims_llm(passages, client, cfg) if client else mine_claims(passages, cfg)
