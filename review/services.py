"""Review decisions and the gate: who may decide, what a decision writes, when synthesis may start.

Other apps read the gate through two functions:

- ``gate_status(run) -> GateStatus``: is synthesis allowed, and which claims still block it.
- ``approved_capsules(run) -> list[Capsule]``: the only claims a report may be built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any
from uuid import UUID

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from ledger.models import (
    Claim,
    DispositionState,
    EvidenceLink,
    ReviewState,
    Verdict,
    VerifierVote,
)
from ledger.readers import claim_input, linked_items
from ledger.services.claims import Narrowing, do_apply_review
from research.models import Plan, PlanRole, Run
from research.pipeline.text import claim_fingerprint
from research.pipeline.verify import (
    ClaimVerdict,
    VerifyConfig,
    default_config,
    restate,
    verify_claim,
)
from research.pipeline.verify.aggregate import AggregateConfig
from research.pipeline.verify.records import Status
from research.providers.base import ProviderError
from review.models import Action, GatePolicy, ReviewDecision

REVIEWER_GROUP = "reviewer"


REJECT_REASONS: list[tuple[str, str]] = [
    ("unsupported", "The evidence does not support it"),
    ("contradicted", "Credible evidence contradicts it"),
    ("misquoted", "Quote misread or taken out of context"),
    ("overstated", "Overstates what the sources say"),
    ("out-of-scope", "Outside the plan's question or scope"),
    ("outdated", "Outdated: newer evidence supersedes it"),
    ("unreliable-source", "Source not credible or not independent"),
    ("duplicate", "Duplicate of another claim"),
    ("other", "Other (explain below)"),
]

# A claim needs a reviewer's decision before synthesis when the pipeline had doubts.
FLAGGED = ~Q(flags=[]) | Q(
    status__in=[Verdict.FAIL, Verdict.UNCERTAIN, Verdict.UNVERIFIABLE, Verdict.PENDING]
)
# Verdicts a reviewer may approve only as an override, with a written reason.
OVERRIDABLE = (Verdict.FAIL, Verdict.UNCERTAIN, Verdict.UNVERIFIABLE)
MIN_OVERRIDE_REASON = 12  # characters: a reason, not "ok"
FINAL = Q(review_state__in=[ReviewState.APPROVED, ReviewState.REJECTED])
# Blocking: flagged without a final decision, or narrowed and not yet approved/rejected.
BLOCKING = (FLAGGED & ~FINAL) | Q(review_state=ReviewState.NARROWED)
BULK_ELIGIBLE = Q(flags=[], status=Verdict.PASS, review_state=ReviewState.UNREVIEWED)
# A support vote is *strong* at the calibrated score aggregation counts support from
# (``AggregateConfig.min_support_score``); below it, or alone, it is weak.
STRONG_SUPPORT = AggregateConfig().min_support_score
CHECK_FAMILIES = AggregateConfig().check_families


class DecisionRefused(Exception):
    """The rules do not allow this decision; the message tells the reviewer why."""


class DecisionConflict(DecisionRefused):
    """Someone decided the claim after this reviewer loaded it; nothing was saved."""


# --- access ---------------------------------------------------------------------------


def is_reviewer(user: Any) -> bool:
    return bool(user.is_superuser or user.groups.filter(name=REVIEWER_GROUP).exists())


def can_decide(user: Any, plan: Plan) -> bool:
    """A plan's reviewers decide: members with the reviewer role, and its owner or a
    superuser when they are in the site's reviewer group."""
    role = plan.role_of(user)
    if role == PlanRole.REVIEWER:
        return True
    return role == PlanRole.OWNER and is_reviewer(user)


def get_claim_for_user(user: Any, code: UUID, *, write: bool = False) -> Claim:
    """A claim of a plan the user may see: strangers get 404, non-reviewers 403 on write."""
    claim = (
        Claim.objects.select_related("run__plan_version__plan", "subquestion")
        .filter(code=code)
        .first()
    )
    if claim is None or not claim.run.plan_version.plan.is_visible_to(user):
        raise Http404("No such claim")
    if write:
        check_decide(user, claim)
    return claim


def check_decide(user: Any, claim: Claim) -> None:
    if not can_decide(user, claim.run.plan_version.plan):
        raise PermissionDenied(
            "Only the plan's reviewers decide on its claims; ask its owner for the reviewer role."
        )


# --- gate -----------------------------------------------------------------------------


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


# --- capsules for synthesis -----------------------------------------------------------


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


# --- decisions ------------------------------------------------------------------------


def last_narrowing(claim: Claim) -> ReviewDecision | None:
    return claim.decisions.filter(action=Action.NARROW).order_by("created_at", "pk").last()


def approval_refusal(claim: Claim, user: Any, policy: GatePolicy) -> str | None:
    """Why this user may not approve this claim now, or None when they may.

    A claim whose verdict is FAIL, UNCERTAIN or UNVERIFIABLE may be approved as an
    override (:func:`is_override`); that needs a written reason, checked on approval.
    """
    if claim.review_state == ReviewState.APPROVED:
        return "This claim is already approved."
    if claim.status == Verdict.PENDING:
        return "This claim has not been verified yet, so it cannot be approved."
    narrowing = last_narrowing(claim)
    if narrowing is not None:
        refusal = _narrowing_refusal(narrowing)
        if refusal:
            return refusal
        if (
            policy.require_second_reviewer
            and is_high_impact(claim, policy)
            and narrowing.reviewer_id == user.pk
        ):
            return (
                "Second-reviewer rule: you narrowed this high-impact claim, "
                "so another reviewer must approve it."
            )
    if claim.review_state == ReviewState.OVERRIDING:
        proposal = pending_override(claim)
        if proposal is not None and proposal.reviewer_id == user.pk:
            return (
                "Second-reviewer rule for overrides: you proposed this override, so another "
                "reviewer must confirm it."
            )
    return None


def last_approval(claim: Claim) -> ReviewDecision | None:
    """The approval that stands (the claim is approved and this was its last decision)."""
    if claim.review_state != ReviewState.APPROVED:
        return None
    last = claim.decisions.select_related("reviewer").order_by("created_at", "pk").last()
    return last if last is not None and last.action == Action.APPROVE else None


def is_override(claim: Claim) -> bool:
    """Approving this claim now goes against the verifier's verdict."""
    return claim.status in OVERRIDABLE


def pending_override(claim: Claim) -> ReviewDecision | None:
    """The override a second reviewer has yet to confirm (the plan's gate asks for one)."""
    if claim.review_state != ReviewState.OVERRIDING:
        return None
    return claim.decisions.filter(action=Action.APPROVE, override=True).order_by("pk").last()


def _override_reason_refusal(claim: Claim, reason: str) -> str | None:
    if len(reason.strip()) >= MIN_OVERRIDE_REASON:
        return None
    return (
        f"The verifiers found this claim {claim.get_status_display()}: approving it "
        "overrides the verifiers: write why "
        f"(at least {MIN_OVERRIDE_REASON} characters). The reason is shown in the audit "
        "trail, on the capsule and in the report, next to the contrary evidence."
    )


def _narrowing_refusal(narrowing: ReviewDecision) -> str | None:
    """A narrowed text that no verifier could judge cannot be approved, not even as an
    override (nothing was checked); one judged other than PASS is an override case."""
    result = narrowing.reverification or {}
    if not result.get("available"):
        why = result.get("reason") or "re-verification did not run"
        return (
            "The narrowed text has not been re-verified against the evidence "
            f"({why}), so it cannot be approved. Reject it, or narrow it again "
            "once re-verification is available."
        )
    return None


def _lock(claim: Claim, seen_version: int) -> Claim:
    """Lock the claim row; a version other than the one the reviewer saw is a conflict."""
    locked = Claim.objects.select_for_update().get(pk=claim.pk)
    if locked.version != seen_version:
        raise DecisionConflict(conflict_message(locked))
    return locked


def conflict_message(claim: Claim) -> str:
    last = claim.decisions.select_related("reviewer").order_by("created_at", "pk").last()
    who = (
        f"{last.reviewer.get_username()} recorded “{last.action}” at "
        f"{last.created_at:%Y-%m-%d %H:%M:%S} UTC"
        if last
        else "the claim changed"
    )
    return (
        f"Conflict: {who} after you opened this claim. Your decision was not saved; "
        "the page shows the current state — decide again if you still disagree."
    )


def _record(
    claim: Claim, user: Any, action: str, seen_version: int, **fields: Any
) -> ReviewDecision:
    fields.setdefault("text_after", claim.text)
    try:
        with transaction.atomic():
            return ReviewDecision.objects.create(
                claim=claim,
                reviewer=user,
                action=action,
                text_before=claim.text,
                claim_version=seen_version,
                **fields,
            )
    except IntegrityError as exc:  # unique (claim, claim_version): someone was faster
        raise DecisionConflict(conflict_message(claim)) from exc


def _disposition(claim: Claim, state: str, reason: str) -> tuple[str, str] | None:
    """The disposition a decision records (None: the claim has it already)."""
    if claim.disposition == state and state != DispositionState.DROPPED:
        return None
    return state, reason


def do_approve_claim(user: Any, claim: Claim, seen_version: int, note: str = "") -> ReviewDecision:
    """Approve the claim's current text; refused with a reason when the rules forbid it.

    On a FAIL, UNCERTAIN or UNVERIFIABLE claim this is an *override*: ``note`` is its
    written reason (required), and the decision is marked ``override``. When the plan's
    gate asks for a second reviewer on overrides, the first override leaves the claim
    ``overriding`` (still blocking the gate) until another reviewer approves it too.
    """
    check_decide(user, claim)
    with transaction.atomic():
        locked = _lock(claim, seen_version)
        policy = gate_policy(locked.run.plan_version.plan)
        refusal = approval_refusal(locked, user, policy)
        override = is_override(locked)
        if refusal is None and override:
            refusal = _override_reason_refusal(locked, note)
        if refusal:
            raise DecisionRefused(refusal)
        decision = _record(
            locked,
            user,
            Action.APPROVE,
            seen_version,
            reason=note.strip(),
            override=override,
            verdict_at_decision=locked.status,
        )
        confirmed = locked.review_state == ReviewState.OVERRIDING
        if override and policy.override_second_reviewer and not confirmed:
            do_apply_review(locked, ReviewState.OVERRIDING)
            return decision
        why = "approved by a reviewer" + (
            f", overriding the {locked.get_status_display()} verdict" if override else ""
        )
        do_apply_review(
            locked,
            ReviewState.APPROVED,
            disposition=_disposition(locked, DispositionState.KEPT, why),
        )
    return decision


def do_reject_claim(
    user: Any, claim: Claim, seen_version: int, reason_code: str, reason: str = ""
) -> ReviewDecision:
    check_decide(user, claim)
    labels = dict(REJECT_REASONS)
    if reason_code not in labels:
        raise DecisionRefused("Choose a reason for rejecting the claim.")
    if reason_code == "other" and not reason.strip():
        raise DecisionRefused("Explain the reason when you choose “Other”.")
    with transaction.atomic():
        locked = _lock(claim, seen_version)
        decision = _record(
            locked, user, Action.REJECT, seen_version, reason_code=reason_code, reason=reason
        )
        why = f"rejected by a reviewer: {labels[reason_code]}" + (
            f" — {reason.strip()}" if reason.strip() else ""
        )
        do_apply_review(
            locked,
            ReviewState.REJECTED,
            disposition=_disposition(locked, DispositionState.DROPPED, why),
        )
    return decision


def do_narrow_claim(
    user: Any,
    claim: Claim,
    seen_version: int,
    text: str,
    allowed_scope: str | None = None,
    prohibited_overstatements: list[str] | None = None,
    reason: str = "",
) -> ReviewDecision:
    """Replace the claim's text by a narrower one and re-verify it against the same evidence.

    1. Validate the new text (non-empty, different).
    2. Re-verify it before taking the lock (verification may be slow).
    3. Lock, record the decision with the re-verification result, advance the claim.

    ``allowed_scope`` and ``prohibited_overstatements`` left as ``None`` (the reviewer did
    not change them) carry the claim's own over (:func:`carried_scope`); issue 26 found a
    narrowing clearing both.
    """
    check_decide(user, claim)
    text = " ".join(text.split())
    if not text:
        raise DecisionRefused("Write the narrowed claim text.")
    if text == claim.text:
        raise DecisionRefused("The narrowed text is the same as the current text.")
    result = reverify(claim, text)
    allowed_scope = carried_scope(claim, text, allowed_scope)
    if prohibited_overstatements is None:
        prohibited_overstatements = list(claim.prohibited_overstatements or [])
    prohibited = [p.strip() for p in prohibited_overstatements if p.strip()]
    with transaction.atomic():
        locked = _lock(claim, seen_version)
        decision = _record(
            locked,
            user,
            Action.NARROW,
            seen_version,
            text_after=text,
            reason=reason,
            allowed_scope=allowed_scope,
            prohibited_overstatements=prohibited,
            reverification=result,
        )
        narrowing = _narrowing(locked, text, result, allowed_scope, prohibited)
        do_apply_review(locked, ReviewState.NARROWED, narrowing=narrowing)
    return decision


def carried_scope(claim: Claim, text: str, given: str | None) -> str:
    """The narrowed claim's allowed scope: the reviewer's (``given``), else the claim's.

    A PASS verdict sets the scope to the claim's own wording; that default follows the
    wording, so it becomes the narrowed ``text`` rather than the broader old one.
    """
    scope = claim.allowed_scope if given is None else given.strip()
    return text if scope and scope == claim.text else scope


def reverify(claim: Claim, text: str) -> dict[str, Any]:
    """Re-verify ``text`` against the claim's existing evidence; never invents a verdict.

    Returns ``{"available": False, "reason": ...}`` when no verifier can run, else
    ``{"available": True, "status": "pass|fail|uncertain", "rationale": ..., ...}``.
    """
    try:
        verdict = reverify_claim_text(claim, text)
    except ProviderError as exc:
        return {"available": False, "reason": f"the verifiers could not run: {exc}"}
    return reverification_record(verdict)


def reverify_claim_text(
    claim: Claim, text: str, config: VerifyConfig | None = None
) -> ClaimVerdict:
    """Verify a narrowed wording against the same evidence the claim has; writes nothing.

    1. The families judge the new wording against the evidence. A contradiction on the
       claim's own source stays a possible one: the new wording was not mined from it.
    2. When that is short of PASS only for want of support (no contradiction, credible or
       possible), and the current wording PASSed on this evidence, the families judge
       whether the new wording restates it (:func:`restate.restates`: attribution and
       markup set aside, entailment both ways); if it does, it PASSes as a restatement
       (issue 26: every cleanup of a PASS claim came back UNCERTAIN). A change of meaning
       (a negation, a number, a broader or narrower scope) is no restatement and keeps
       the verdict on the evidence.
    """
    quorum = gate_policy(claim.run.plan_version.plan).verifier_quorum
    config = config or default_config(quorum=quorum)
    config = replace(config, aggregate=replace(config.aggregate, own_source_contradicts=True))
    verdict = verify_claim(claim_input(claim, text=text), linked_items(claim), config)
    if not _may_restate(claim, verdict):
        return verdict
    wording = replace(
        claim_input(claim), needs_triangulation=False, time_sensitive=False, high_impact=False
    )
    judged = restate.restates(
        wording,
        text,
        lambda hypothesis, premise: verify_claim(
            hypothesis, [restate.premise_item(premise)], config
        ),
    )
    if not judged.holds:
        verdict.rationale += (
            " Not a restatement of the claim it replaces, which PASSed: "
            + judged.reason.split(": ", 1)[0]
            + "."
        )
        return verdict
    return _restated(claim, verdict, judged)


def _may_restate(claim: Claim, verdict: ClaimVerdict) -> bool:
    return (
        claim.status == Verdict.PASS
        and verdict.status == Status.UNCERTAIN
        and not verdict.refute_ids
        and not verdict.possible_contradictions
        and not verdict.unavailable
    )


def _restated(claim: Claim, verdict: ClaimVerdict, judged: restate.Restatement) -> ClaimVerdict:
    """The new wording's verdict: PASS on the strength of the claim it restates."""
    verdict.status = Status.PASS
    verdict.confidence = round(min(claim.confidence or 1.0, judged.confidence), 4)
    verdict.flags = sorted(set(verdict.flags) | set(claim.flags or []))
    verdict.independent_sources = claim.independent_sources
    verdict.rationale = (
        f"PASS as a restatement: {judged.reason}, and the claim it replaces "
        f"(“{claim.text}”) PASSed on this evidence. On the evidence alone the new wording "
        f"was {verdict.rationale}"
    )
    return verdict


def reverification_record(verdict: Any) -> dict[str, Any]:
    """A JSON-safe summary of a verifier's answer, stored on the narrow decision."""
    if verdict is None:
        return {"available": False, "reason": "no verifier could judge the narrowed text"}
    data = verdict if isinstance(verdict, dict) else vars(verdict)
    status = str(data.get("status") or "").lower()
    record: dict[str, Any] = {
        "available": bool(data.get("available", bool(status))),
        "status": status,
        "rationale": str(data.get("rationale") or ""),
        "confidence": data.get("confidence"),
        "fingerprint": str(data.get("claim_fingerprint") or ""),
        "flags": [str(f) for f in data.get("flags") or []],
        "votes": [_vote_record(v) for v in data.get("votes") or []],
        "notes": {str(k): str(v) for k, v in (data.get("notes") or {}).items()},
    }
    if data.get("reason"):
        record["reason"] = str(data["reason"])
    return record


def _vote_record(vote: Any) -> dict[str, Any]:
    data = vote if isinstance(vote, dict) else vars(vote)
    return {
        "verifier": str(data.get("verifier") or ""),
        "family": str(data.get("family") or ""),
        "verdict": str(data.get("verdict") or ""),
        "score": data.get("score"),
        "quote": str(data.get("quote") or ""),
        "rationale": str(data.get("rationale") or ""),
    }


def _narrowing(
    claim: Claim, text: str, result: dict[str, Any], allowed_scope: str, prohibited: list[str]
) -> Narrowing:
    """The claim will say ``text``, with the re-verification's verdict (PENDING when no
    verifier could judge it); refused when another claim of the run says exactly this."""
    taken = Claim.objects.filter(run_id=claim.run_id, fingerprint=claim_fingerprint(text))
    if taken.exclude(pk=claim.pk).exists():
        raise DecisionRefused("Another claim of this run already says exactly this.")
    if result.get("available"):
        status = result.get("status") or Verdict.UNCERTAIN
        rationale = f"Re-verified after narrowing: {result.get('rationale') or ''}".strip()
        confidence = result.get("confidence")
    else:
        status = Verdict.PENDING
        rationale = f"Narrowed; not re-verified: {result.get('reason', '')}"
        confidence = None
    return Narrowing(text, status, rationale, confidence, allowed_scope, prohibited)


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


def do_bulk_approve(user: Any, run: Run) -> int:
    """Approve every claim :func:`bulk_eligible` offers; one decision row each."""
    if not can_decide(user, run.plan_version.plan):
        raise PermissionDenied("Only reviewers decide on claims.")
    if not gate_policy(run.plan_version.plan).allow_bulk_approve:
        raise DecisionRefused("This plan's gate policy does not allow bulk approval.")
    with transaction.atomic():
        claims = list(
            bulk_eligible(ledger_claims(run)).select_for_update(of=("self",)).order_by("pk")
        )
        for claim in claims:
            _record(claim, user, Action.APPROVE, claim.version, reason="bulk approval")
            do_apply_review(
                claim,
                ReviewState.APPROVED,
                disposition=_disposition(
                    claim, DispositionState.KEPT, "approved by a reviewer (bulk)"
                ),
            )
    return len(claims)


# --- reading --------------------------------------------------------------------------


def subquestion_counts(run: Run) -> list[dict[str, Any]]:
    """Per subquestion: claims, flagged, blocking, approved, rejected."""
    rows = (
        ledger_claims(run)
        .values("subquestion__key", "subquestion__text", "subquestion__position")
        .annotate(
            total=Count("pk"),
            flagged=Count("pk", filter=FLAGGED),
            blocking=Count("pk", filter=BLOCKING),
            approved=Count("pk", filter=Q(review_state=ReviewState.APPROVED)),
            rejected=Count("pk", filter=Q(review_state=ReviewState.REJECTED)),
        )
        .order_by("subquestion__position")
    )
    return list(rows)


def queue_neighbours(claim: Claim) -> dict[str, Any]:
    """Previous/next claim in the review queue (flagged claims; all claims if unflagged)."""
    claims = ledger_claims(claim.run)
    queue = claims.filter(FLAGGED) if is_flagged(claim) else claims
    codes = list(review_order(queue).values_list("code", flat=True))
    pos = codes.index(claim.code) if claim.code in codes else -1
    return {
        "previous": codes[pos - 1] if pos > 0 else None,
        "next": codes[pos + 1] if 0 <= pos < len(codes) - 1 else None,
        "position": pos + 1,
        "length": len(codes),
        "flagged_queue": is_flagged(claim),
    }


def next_blocking(run: Run, after: Claim | None = None) -> UUID | None:
    """The next claim still blocking the gate, after ``after`` in queue order (wrapping)."""
    codes = gate_status(run).blocking
    if not codes:
        return None
    if after is not None:
        order = list(review_order(ledger_claims(run)).values_list("code", flat=True))
        rank = {code: i for i, code in enumerate(order)}
        here = rank.get(after.code, -1)
        later = [c for c in codes if rank.get(c, -1) > here]
        return later[0] if later else codes[0]
    return codes[0]


def run_decisions(run: Run) -> QuerySet[ReviewDecision]:
    """The run's audit trail, oldest first."""
    return (
        ReviewDecision.objects.filter(claim__run=run)
        .select_related("reviewer", "claim", "carried_from__claim")
        .order_by("created_at", "pk")
    )


# --- evidence in context --------------------------------------------------------------

CONTEXT_CHARS = 600


@dataclass(frozen=True)
class QuoteInContext:
    """A quote cut out of the text around it, for highlighting without any markup in data.

    ``quote`` is the text at the stored offsets; ``intact`` says whether it still equals
    the stored quote (a mismatch is shown to the reviewer, never hidden).
    """

    link: EvidenceLink
    before: str
    quote: str
    after: str
    clipped_before: bool
    clipped_after: bool
    intact: bool
    vote: VerifierVote | None = None  # the counted vote behind the link's relation


def quote_in_context(link: EvidenceLink, vote: VerifierVote | None = None) -> QuoteInContext:
    passage, text = link.passage, link.snapshot.text
    inside = passage.start <= link.quote_start and link.quote_end <= passage.end
    base, offset = (passage.text, passage.start) if inside else (text, 0)
    start, end = link.quote_start - offset, link.quote_end - offset
    low, high = max(0, start - CONTEXT_CHARS), min(len(base), end + CONTEXT_CHARS)
    return QuoteInContext(
        link=link,
        before=base[low:start],
        quote=base[start:end],
        after=base[end:high],
        clipped_before=low > 0,
        clipped_after=high < len(base),
        intact=text[link.quote_start : link.quote_end] == link.quote,
        vote=vote,
    )


# Relations that put a passage in the counter-evidence column, whatever pool found it.
CONTRARY = ("contradicts", "possible-contradiction")


def evidence_pools(claim: Claim) -> dict[str, list[QuoteInContext]]:
    """The claim's evidence in columns: support, refute (counter-evidence), background
    (every other passage read).

    A passage goes by what the verifiers found in it (its relation, set by the counted
    votes), never by the query that found it: one that contradicts the claim (credibly or
    possibly) is counter-evidence, one that supports it is support even when a refutation
    query found it, and one judged insufficient or unverifiable is neither, whichever pool
    it came from (issue 26: an Insufficient passage was listed as supporting evidence).
    Each carries the counted vote behind its relation.
    """
    links = (
        claim.evidence.select_related("passage", "snapshot__source")
        .defer("snapshot__raw", "passage__embedding")
        .order_by("pool", "-is_anchor", "-score", "pk")
    )
    votes = _deciding_votes(claim)
    pools: dict[str, list[QuoteInContext]] = {"support": [], "refute": [], "background": []}
    for link in links:
        column = "background"
        if link.relation in CONTRARY:
            column = "refute"
        elif link.relation == "supports":
            column = "support"
        pools[column].append(quote_in_context(link, votes.get(link.pk)))
    return pools


def _deciding_votes(claim: Claim) -> dict[int, VerifierVote]:
    """Per evidence link, the strongest counted, valid vote agreeing with its relation."""
    wanted = {"contradicts": "contradicts", "possible-contradiction": "contradicts"}
    best: dict[int, VerifierVote] = {}
    rows = claim.votes.filter(valid=True, shadow=False, evidence__isnull=False).select_related(
        "evidence"
    )
    for vote in rows:
        link = vote.evidence
        assert link is not None
        if vote.verdict != wanted.get(link.relation, link.relation):
            continue
        held = best.get(link.pk)
        if held is None or (vote.score or 0.0) > (held.score or 0.0):
            best[link.pk] = vote
    return best


# --- carried over from an earlier run ---------------------------------------------------


def do_carry_over_decisions(
    claim: Claim, history: list[ReviewDecision], reverification: dict[str, Any] | None
) -> list[ReviewDecision]:
    """Replay an earlier run's decisions on an unchanged claim of a new run.

    Each becomes a decision on this claim by the same reviewer, with the same action,
    reasons and texts, linked to the decision it carries (``carried_from``); a narrowing
    applies ``reverification`` (the narrowed text re-verified on this claim's evidence).
    Refused (``DecisionRefused``, nothing written) when the history does not start from
    this claim's text or the claim already has decisions.
    """
    with transaction.atomic():
        locked = Claim.objects.select_for_update().get(pk=claim.pk)
        if locked.decisions.exists():
            raise DecisionRefused("This claim already has decisions.")
        return [_carry(locked, old, reverification or {}) for old in history]


def _carry(claim: Claim, old: ReviewDecision, reverification: dict[str, Any]) -> ReviewDecision:
    if old.text_before != claim.text:
        raise DecisionRefused(f"the earlier {old.action} was of another text")
    decision = ReviewDecision.objects.create(
        claim=claim,
        reviewer=old.reviewer,
        action=old.action,
        text_before=claim.text,
        text_after=old.text_after,
        reason_code=old.reason_code,
        reason=old.reason,
        allowed_scope=old.allowed_scope,
        prohibited_overstatements=old.prohibited_overstatements,
        claim_version=claim.version,
        reverification=reverification if old.action == Action.NARROW else {},
        carried_from=old,
        override=old.override,
        verdict_at_decision=old.verdict_at_decision,
    )
    carried = f"carried over from run {old.claim.run.code}"
    if old.action == Action.NARROW:
        prohibited = list(old.prohibited_overstatements or [])
        narrowing = _narrowing(claim, old.text_after, reverification, old.allowed_scope, prohibited)
        do_apply_review(claim, ReviewState.NARROWED, narrowing=narrowing)
    elif old.action == Action.APPROVE:
        why = f"approved by a reviewer ({carried})"
        disposition = _disposition(claim, DispositionState.KEPT, why)
        do_apply_review(claim, ReviewState.APPROVED, disposition=disposition)
    else:
        label = dict(REJECT_REASONS).get(old.reason_code, old.reason_code)
        why = f"rejected by a reviewer: {label} ({carried})"
        disposition = _disposition(claim, DispositionState.DROPPED, why)
        do_apply_review(claim, ReviewState.REJECTED, disposition=disposition)
    return decision
