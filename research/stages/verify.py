"""Verify stage: counter-evidence pools and verifier votes per claim (helper-verify's code).

Claims are verified one by one through ``ledger.services.claims``; votes are unique
per claim, evidence and verifier, so a resumed stage casts no vote twice. When this
build has no verifier, the stage says so and every claim stays PENDING for review.
"""

from __future__ import annotations

from ledger.models import Claim, Verdict
from research.stages.adapters import optional_module
from research.stages.base import StageContext

UNAVAILABLE = "claim verification: not available in this build"


def run(ctx: StageContext) -> None:
    claims = optional_module("ledger.services.claims")
    verify_claim = getattr(claims, "do_verify_claim", None) if claims else None
    pending = Claim.objects.filter(run=ctx.run).order_by("pk")
    total = pending.count()
    if verify_claim is None:
        ctx.note("claim verification", UNAVAILABLE)
        return
    ctx.progress(total - pending.filter(status=Verdict.PENDING).count(), total)
    for claim in pending.filter(status=Verdict.PENDING):
        ctx.safe_point(wall_time=False)
        verify_claim(claim)
        done = total - pending.filter(status=Verdict.PENDING).count()
        ctx.progress(done, total)
    ctx.count(**{s: pending.filter(status=s).count() for s in ("pass", "fail", "uncertain")})
