"""Capsules: the approved claims a report may be built from, with their evidence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from uuid import UUID

from ledger.models import Claim, EvidenceLink, ReviewState, Verdict
from research.models import Run
from review.models import Action, ReviewDecision
from review.services.gate import ledger_claims, review_order


@dataclass(frozen=True)
class CapsuleQuote:
    """One verbatim quote bound to a capsule (``snapshot.text[start:end] == quote``)."""

    pool: str
    relation: str
    quote: str
    quote_start: int
    quote_end: int
    snapshot_code: UUID
    passage_fingerprint: str
    source_code: UUID
    source_title: str
    source_url: str
    source_type: str
    publisher: str
    published_date: date | None
    cluster: str
    score: float | None


@dataclass(frozen=True)
class Capsule:
    """An approved claim: what a report may say, its limits and its evidence."""

    code: UUID
    text: str
    claim_type: str
    status: str
    subquestion_key: str
    subquestion_text: str
    allowed_scope: str
    prohibited_overstatements: list[str]
    limitations: str
    confidence: float | None
    independent_sources: int
    fingerprint: str
    approved_by: str
    approved_at: datetime
    decision_code: UUID
    evidence: list[CapsuleQuote]
    override: bool = False  # approved against the verifier's verdict (see the reason)
    override_reason: str = ""
    overridden_verdict: str = ""


def approved_capsules(run: Run) -> list[Capsule]:
    """Claims whose latest decision is an approval of their current text.

    A claim whose verdict is not PASS counts only when that approval is an override
    (a reviewer's written reason; the capsule says so). The gate is not checked here:
    callers check ``gate_status(run).open`` first.
    """
    claims = (
        review_order(ledger_claims(run).filter(review_state=ReviewState.APPROVED))
        .select_related("subquestion")
        .prefetch_related("decisions__reviewer", "evidence__snapshot__source")
    )
    capsules = []
    for claim in claims:
        decisions = list(claim.decisions.all())
        last = decisions[-1] if decisions else None
        if last is None or last.action != Action.APPROVE or last.text_after != claim.text:
            continue  # review_state disagrees with the history: not approved
        if claim.status != Verdict.PASS and not last.override:
            continue  # a non-PASS claim is approved only by an override
        capsules.append(_capsule(claim, last))
    return capsules


def _capsule(claim: Claim, approval: ReviewDecision) -> Capsule:
    sub = claim.subquestion
    return Capsule(
        code=claim.code,
        text=claim.text,
        claim_type=claim.claim_type,
        status=claim.status,
        subquestion_key=sub.key if sub else "",
        subquestion_text=sub.text if sub else "",
        allowed_scope=claim.allowed_scope,
        prohibited_overstatements=list(claim.prohibited_overstatements or []),
        limitations=claim.limitations,
        confidence=claim.confidence,
        independent_sources=claim.independent_sources,
        fingerprint=claim.fingerprint,
        approved_by=approval.reviewer.get_username(),
        approved_at=approval.created_at,
        decision_code=approval.code,
        evidence=[_capsule_quote(link) for link in claim.evidence.all()],
        override=approval.override,
        override_reason=approval.reason if approval.override else "",
        overridden_verdict=approval.verdict_at_decision if approval.override else "",
    )


def _capsule_quote(link: EvidenceLink) -> CapsuleQuote:
    source = link.snapshot.source
    return CapsuleQuote(
        pool=link.pool,
        relation=link.relation,
        quote=link.quote,
        quote_start=link.quote_start,
        quote_end=link.quote_end,
        snapshot_code=link.snapshot.code,
        passage_fingerprint=link.passage_fingerprint,
        source_code=source.code,
        source_title=source.title,
        source_url=source.url,
        source_type=source.source_type,
        publisher=source.publisher,
        published_date=source.published_date,
        cluster=source.cluster,
        score=link.score,
    )


def last_approval(claim: Claim) -> ReviewDecision | None:
    """The approval that stands (the claim is approved and this was its last decision)."""
    if claim.review_state != ReviewState.APPROVED:
        return None
    last = claim.decisions.select_related("reviewer").order_by("created_at", "pk").last()
    return last if last is not None and last.action == Action.APPROVE else None
