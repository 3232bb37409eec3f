"""The review gate: which claims need a decision, and whether synthesis may start."""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery

from ledger.models import Claim, DispositionState, EvidenceLink, ReviewState, Verdict, VerifierVote
from research.models import Plan, Run
from research.pipeline.verify.aggregate import AggregateConfig
from review.models import GatePolicy

# A claim needs a reviewer's decision before synthesis when the pipeline had doubts.
FLAGGED = ~Q(flags=[]) | Q(
    status__in=[Verdict.FAIL, Verdict.UNCERTAIN, Verdict.UNVERIFIABLE, Verdict.PENDING]
)
FINAL = Q(review_state__in=[ReviewState.APPROVED, ReviewState.REJECTED])
# Blocking: flagged without a final decision, or narrowed and not yet approved/rejected.
BLOCKING = (FLAGGED & ~FINAL) | Q(review_state=ReviewState.NARROWED)
BULK_ELIGIBLE = Q(flags=[], status=Verdict.PASS, review_state=ReviewState.UNREVIEWED)
# A support vote is *strong* at the calibrated score aggregation counts support from
# (``AggregateConfig.min_support_score``); below it, or alone, it is weak.
STRONG_SUPPORT = AggregateConfig().min_support_score
CHECK_FAMILIES = AggregateConfig().check_families
# Relations that put a passage in the counter-evidence column, whatever pool found it.
CONTRARY = ("contradicts", "possible-contradiction")


@dataclass(frozen=True)
class GateStatus:
    """Whether synthesis may start for a run, and what still blocks it."""

    open: bool
    run_ready: bool  # the run reached awaiting_review or later
    total: int = 0
    flagged: int = 0
    required: int = 0
    approved: int = 0
    rejected: int = 0
    narrowed: int = 0
    unreviewed: int = 0
    bulk_eligible: int = 0
    blocking: list[UUID] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.required - len(self.blocking)

    @property
    def percent(self) -> int:
        return 100 if self.required == 0 else (100 * self.done) // self.required

    @property
    def reason(self) -> str:
        if not self.run_ready:
            return "The run has not finished verification yet."
        if self.blocking:
            return f"{len(self.blocking)} claim(s) still need a reviewer's decision."
        return "Every claim to review has a decision: synthesis may start."


def ledger_claims(run: Run) -> QuerySet[Claim]:
    """The claims a reviewer sees for a run (superseded ones live on in their successor)."""
    return Claim.objects.filter(run=run).exclude(disposition=DispositionState.SUPERSEDED)


def review_order(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    return claims.order_by("subquestion__position", "pk")


def gate_status(run: Run) -> GateStatus:
    """Synthesis stays blocked until every claim to review (not PASS, or carrying a flag)
    has a final decision."""
    claims = ledger_claims(run)
    counts = claims.aggregate(
        total=Count("pk"),
        flagged=Count("pk", filter=FLAGGED),
        required=Count("pk", filter=FLAGGED | Q(review_state=ReviewState.NARROWED)),
        approved=Count("pk", filter=Q(review_state=ReviewState.APPROVED)),
        rejected=Count("pk", filter=Q(review_state=ReviewState.REJECTED)),
        narrowed=Count("pk", filter=Q(review_state=ReviewState.NARROWED)),
        unreviewed=Count("pk", filter=Q(review_state=ReviewState.UNREVIEWED)),
    )
    counts["bulk_eligible"] = bulk_eligible(claims).count()
    blocking = list(review_order(claims.filter(BLOCKING)).values_list("code", flat=True))
    run_ready = run.is_reviewable
    return GateStatus(
        open=run_ready and not blocking, run_ready=run_ready, blocking=blocking, **counts
    )


def gate_policy(plan: Plan) -> GatePolicy:
    """The plan's policy, or the defaults (unsaved) when it has none."""
    return GatePolicy.objects.filter(plan=plan).first() or GatePolicy(plan=plan)


def is_high_impact(claim: Claim, policy: GatePolicy) -> bool:
    """No listed types means every claim counts as high-impact."""
    types = policy.high_impact_types or []
    return not types or claim.claim_type in types


def is_flagged(claim: Claim) -> bool:
    return bool(claim.flags) or claim.status != Verdict.PASS


def bulk_eligible(claims: QuerySet[Claim]) -> QuerySet[Claim]:
    """The claims bulk approval may offer: unflagged, PASS, unreviewed, and nothing a
    reviewer would want to see first (issue 26, where a navigation sentence PASSed):

    - no possible contradiction: no passage whose relation is a contradiction (credible or
      possible) and no counted contradicting vote on any passage, set aside or not;
    - not resting on a single weak vote: at least two distinct judging families cast a
      counted (valid, not shadow) *supports* vote at a calibrated score of at least
      ``STRONG_SUPPORT``. One such vote, or any number below it, is weak.
    """
    contrary = EvidenceLink.objects.filter(claim=OuterRef("pk"), relation__in=CONTRARY)
    counted = VerifierVote.objects.filter(claim=OuterRef("pk"), valid=True, shadow=False)
    strong = (
        counted.filter(verdict="supports", score__gte=STRONG_SUPPORT)
        .exclude(family__in=CHECK_FAMILIES)
        .order_by()
        .values("claim")
        .annotate(n=Count("family", distinct=True))
        .values("n")
    )
    return (
        claims.filter(BULK_ELIGIBLE)
        .exclude(Exists(contrary))
        .exclude(Exists(counted.filter(verdict="contradicts")))
        .annotate(strong_families=Subquery(strong))
        .filter(strong_families__gte=2)
    )
