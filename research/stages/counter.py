"""Counter-evidence stage: support and refutation queries per claim, pools saved on it.

Runs between mining and verification so that no claim is judged on support alone:
``ledger.services.claims.do_gather_counter_evidence`` sends the claim's support queries
and its refutation queries (negation, limitation, failure case, replication, comparison)
to the run's libraries and saves what each found as separate support / refute /
background pools. A claim that already has its pools is skipped, so a resumed stage
searches nothing twice. Without retrieval the stage records that claims will be judged
on their anchors alone.
"""

from __future__ import annotations

from ledger.models import Claim, Verdict
from research.stages.adapters import optional_module
from research.stages.base import StageContext

UNAVAILABLE = "counter-evidence: not available in this build"
NO_RETRIEVAL = "counter-evidence: retrieval unavailable; claims judged on their anchors only"


def run(ctx: StageContext) -> None:
    claims = optional_module("ledger.services.claims")
    gather = getattr(claims, "do_gather_counter_evidence", None) if claims else None
    if claims is None or gather is None:
        ctx.note("counter-evidence", UNAVAILABLE)
        return
    retrieve = claims.library_retrieve(ctx.run)
    if retrieve is None:
        ctx.note("counter-evidence", NO_RETRIEVAL)
    pending = Claim.objects.filter(run=ctx.run, status=Verdict.PENDING)
    total = pending.count()
    todo = pending.filter(counter_evidence={}).order_by("pk")
    for claim in todo:
        ctx.progress(total - todo.count(), total)
        ctx.safe_point(wall_time=False)
        gather(claim, retrieve)
    ctx.progress(total, total)
    records = pending.values_list("counter_evidence", flat=True)
    sizes = [r.get("pools", {}) for r in records]
    ctx.count(
        counter_queries=sum(len(r.get("queries", [])) for r in records),
        refute_passages=sum(len(p.get("refute", [])) for p in sizes),
        claims_without_refute_pool=sum(1 for p in sizes if not p.get("refute")),
    )
