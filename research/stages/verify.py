"""Verify stage: verifier votes per claim against the pools the counter-evidence stage saved.

The verifier families are built once per stage; claims are verified one by one, oldest
first. A claim that already has a verdict is skipped, and votes are unique per claim,
evidence and verifier, so a resumed stage casts no vote twice. A claim without saved
pools (a run upgraded mid-way) has them gathered first. When this build has no verifier,
the stage says so and every claim stays PENDING for review.
"""

from __future__ import annotations

from ledger.models import Claim, Verdict
from research.stages.adapters import optional_module
from research.stages.base import StageContext

UNAVAILABLE = "claim verification: not available in this build"


def run(ctx: StageContext) -> None:
    claims = optional_module("ledger.services.claims")
    verify_claim = getattr(claims, "do_verify_claim", None) if claims else None
    if claims is None or verify_claim is None:
        ctx.note("claim verification", UNAVAILABLE)
        return
    config = claims.default_config()
    for family, why in getattr(config, "notes", {}).items():
        ctx.note(family, why)
    run_claims = Claim.objects.filter(run=ctx.run)
    ungathered = run_claims.filter(status=Verdict.PENDING, counter_evidence={}).exists()
    retrieve = claims.library_retrieve(ctx.run) if ungathered else None
    total = run_claims.count()
    for claim in run_claims.filter(status=Verdict.PENDING).order_by("pk"):
        ctx.progress(total - run_claims.filter(status=Verdict.PENDING).count(), total)
        ctx.safe_point(wall_time=False)
        verify_claim(claim, retrieve=retrieve, config=config)
    ctx.progress(total, total)
    ctx.count(**{s: run_claims.filter(status=s).count() for s in ("pass", "fail", "uncertain")})
