"""Counter-evidence stage: support and refutation queries per claim, pools saved on it.

Runs between mining and verification so that no claim is judged on support alone. For
each pending claim without a record: load its anchors (``ledger.readers``), run the pure
step ``research.pipeline.counter.gather_counter_evidence`` — the claim's support queries
and its refutation queries (negation, limitation, failure case, replication, comparison)
sent to the run's libraries, found passages sorted into support / refute / background
pools, a passage that is not about the claim set aside (``claim_relevance``) — and save
the ``CounterRecord`` on the claim
(``ledger.services.counter_evidence.do_save_counter_evidence``). A claim that already has
its record is skipped, so a resumed stage searches nothing twice.
"""

from __future__ import annotations

from ledger.models import Claim, Verdict
from ledger.readers import anchor_items, counter_record, term_idf
from ledger.services.counter_evidence import do_save_counter_evidence
from research.pipeline.claims.relevance import terms
from research.pipeline.counter import (
    CounterRecord,
    Retrieve,
    claim_relevance,
    gather_counter_evidence,
)
from research.stages.base import StageContext
from research.stages.retrieve import library_retrieve

COUNTER_K = 4  # passages per counter query


def run(ctx: StageContext) -> None:
    retrieve = library_retrieve(ctx.run)
    pending = Claim.objects.filter(run=ctx.run, status=Verdict.PENDING)
    total = pending.count()
    todo = pending.filter(counter_evidence={}).order_by("pk")
    for claim in todo:
        ctx.progress(total - todo.count(), total)
        ctx.safe_point(wall_time=False)
        gather(claim, retrieve)
    ctx.progress(total, total)
    records = [counter_record(claim) or CounterRecord() for claim in pending]
    ctx.count(
        counter_queries=sum(len(r.queries) for r in records),
        refute_passages=sum(len(r.refute) for r in records),
        claims_without_refute_pool=sum(1 for r in records if not r.refute),
        off_topic_passages=sum(q.off_topic for r in records for q in r.queries),
    )


def gather(claim: Claim, retrieve: Retrieve) -> CounterRecord:
    """1. load the claim's anchors and its words' idf, 2. search its counter queries,
    keeping only passages about the claim (lexical relevance: the claim's words, weighted
    by rarity, in the passage or its title — cheap enough for every passage found), 3. save
    the record."""
    about = claim_relevance(None, term_idf(terms(claim.text)))
    record = gather_counter_evidence(
        claim.text,
        claim.claim_type,
        claim.entities,
        retrieve,
        k=COUNTER_K,
        anchors=anchor_items(claim),
        about=about,
    )
    do_save_counter_evidence(claim, record)
    return record
