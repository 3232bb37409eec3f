"""Verify stage: where a claim is verified.

The verifier families are built once per stage (``research.pipeline.verify.default_config``);
claims are verified one by one, oldest first, by :func:`verify`:

1. load: the claim as a ``ClaimInput`` and the pools the counter-evidence stage saved as
   ``Pools`` of ``EvidenceItem`` (``ledger.readers.claim_input`` / ``gathered_pools``);
2. the pure step: ``research.pipeline.verify.verify_claim`` admits the evidence, collects
   every family's votes, admits the votes and aggregates them conservatively into a
   ``ClaimVerdict``;
3. save, in one transaction: ``ledger.services.verdicts.do_record_verdict`` (evidence
   links, votes, status, capsule, disposition) and the run's verification counters
   (``research.services.runs.do_count_verification``).

A claim that already has a verdict is skipped, and votes are unique per claim, evidence
and verifier, so a resumed stage casts no vote twice. A claim without a counter-evidence
record (a run upgraded mid-way) has it gathered first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from django.db import transaction

from ledger.models import Claim, Verdict
from ledger.readers import claim_input, counter_record, gathered_pools
from ledger.services.verdicts import do_record_verdict
from research.models import Run
from research.pipeline.counter import Retrieve
from research.pipeline.verify import (
    STAGE_EMBEDDING_CACHE,
    ClaimVerdict,
    VerifyConfig,
    default_config,
    verify_claim,
    verify_encoder,
)
from research.pipeline.verify.align import alignment_words
from research.pipeline.verify.embedcache import EmbeddingCache
from research.pipeline.verify.features import item_sentences
from research.services.runs import do_count_verification, do_record_families
from research.stages import audit, counter
from research.stages.base import StageContext
from research.stages.retrieve import library_retrieve
from review.models import GatePolicy


def run(ctx: StageContext) -> None:
    cache = EmbeddingCache(verify_encoder().encode, max_entries=STAGE_EMBEDDING_CACHE)
    config = default_config(cache.encode, quorum=plan_quorum(ctx.run))
    for family, state in config.family_states().items():
        ctx.note(f"family {family}", state)
    ctx.note("quorum", f"PASS needs {config.aggregate.quorum} verifier families to agree")
    do_record_families(ctx.run, config.family_states(), config.aggregate.quorum)
    if audit.is_audit(ctx.plan):
        audit.verify(ctx, config, cache.encode)
        return
    run_claims = Claim.objects.filter(run=ctx.run)
    if "learned" not in config.unavailable:  # the learned family encodes sentences
        encode_ahead(run_claims.filter(status=Verdict.PENDING).order_by("pk"), cache)
    ungathered = run_claims.filter(status=Verdict.PENDING, counter_evidence={}).exists()
    retrieve = library_retrieve(ctx.run) if ungathered else None
    total = run_claims.count()
    for claim in run_claims.filter(status=Verdict.PENDING).order_by("pk"):
        ctx.progress(total - run_claims.filter(status=Verdict.PENDING).count(), total)
        ctx.safe_point(wall_time=False)
        verify(claim, config, retrieve)
    ctx.progress(total, total)
    ctx.count(
        **{
            s: run_claims.filter(status=s).count()
            for s in ("pass", "fail", "uncertain", "unverifiable")
        }
    )


def plan_quorum(run: Run) -> int:
    """The plan's gate setting: how many verifier families must agree for a PASS."""
    policy = GatePolicy.objects.filter(plan_id=run.plan_version.plan_id).first()
    return policy.verifier_quorum if policy is not None else GatePolicy.DEFAULT_QUORUM


def encode_ahead(claims: Iterable[Claim], cache: EmbeddingCache) -> None:
    """Encode every claim and pool sentence (and every word the ``align`` family aligns)
    the stage will judge, in one length-sorted call.

    The encoder then works on full batches of similar length instead of one short call per
    claim; the verifiers find the vectors in ``cache`` (same encoder, same numbers).
    """
    texts: list[str] = []
    for claim in claims:
        if counter_record(claim) is None:
            continue  # gathered later, in verify()
        texts.append(claim.text)
        items = gathered_pools(claim).items()
        for item in items:
            texts += [item.text[a:b] for a, b in item_sentences(item)]
        texts += alignment_words(claim.text, items)  # the align family's word vectors
    if texts:
        cache.encode(list(dict.fromkeys(texts)))


def verify(
    claim: Claim, config: VerifyConfig, retrieve: Retrieve | None = None
) -> ClaimVerdict | None:
    """Verify one pending claim against its gathered pools and record the verdict.

    Returns None for a claim that already has a verdict. Without a counter-evidence
    record, it is gathered first (through ``retrieve``, default: the run's libraries).
    """
    if claim.status != Verdict.PENDING:
        return None
    record = counter_record(claim)
    if record is None:
        record = counter.gather(claim, retrieve or library_retrieve(claim.run))
    if record.unavailable:
        config = replace(config, notes={**config.notes, "counter-evidence": record.unavailable})
    pools = gathered_pools(claim)
    verdict = verify_claim(claim_input(claim), pools, config)
    with transaction.atomic():
        tally = do_record_verdict(claim, verdict, pools.items())
        do_count_verification(claim.run, tally)
    return verdict
