"""Mine stage: atomic claims from each subquestion's top evidence (helper-verify's miner).

The pools the retrieve stage saved go to ``ledger.services.claims`` subquestion by
subquestion; claims are unique per run and fingerprint, so a resumed stage adds none
twice. Every candidate the miner produced is recorded as kept, merged or dropped with its
reason (``ledger.models.Candidate``); only kept ones become claims. When this build has
no claim miner, the stage says so and mines nothing.
"""

from __future__ import annotations

from ledger.models import Claim
from research.stages.adapters import optional_module
from research.stages.base import StageContext
from research.stages.retrieve import pools_of

UNAVAILABLE = "claim mining: not available in this build"


def run(ctx: StageContext) -> None:
    claims = optional_module("ledger.services.claims")
    mine_subquestion = getattr(claims, "do_mine_subquestion", None) if claims else None
    pools = pools_of(ctx)
    if claims is None or mine_subquestion is None:
        ctx.note("claim mining", UNAVAILABLE)
        return
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
        counts = claims.candidate_counts(ctx.run)
        ctx.count(
            claims=run_claims.count(),
            candidates=counts.pop("total"),
            **{f"candidates_{state}": n for state, n in counts.items()},
        )
