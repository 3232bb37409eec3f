"""Review decisions: approve, reject, narrow (with re-verification), overrides, bulk
approval and the carry-over of an earlier run's decisions. Each writes one append-only
``ReviewDecision`` per claim and advances the claim through the ledger's services."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from ledger.models import Claim, DispositionState, ReviewState, Verdict
from ledger.services.claims import Narrowing, do_apply_review
from research.models import Run
from research.pipeline.text import claim_fingerprint
from review.models import Action, GatePolicy, ReviewDecision
from review.records import Reverification
from review.services.access import can_decide, check_decide
from review.services.gate import bulk_eligible, gate_policy, is_high_impact, ledger_claims
from review.services.reverify import reverify

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

# Verdicts a reviewer may approve only as an override, with a written reason.
OVERRIDABLE = (Verdict.FAIL, Verdict.UNCERTAIN, Verdict.UNVERIFIABLE)
MIN_OVERRIDE_REASON = 12  # characters: a reason, not "ok"


class DecisionRefused(Exception):
    """The rules do not allow this decision; the message tells the reviewer why."""


class DecisionConflict(DecisionRefused):
    """Someone decided the claim after this reviewer loaded it; nothing was saved."""


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
    result = narrowing.reverified
    if not result.available:
        why = result.reason or "re-verification did not run"
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
            rejection_code=reason_code,
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
            reverification=result.to_json(),
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


def _narrowing(
    claim: Claim, text: str, result: Reverification, allowed_scope: str, prohibited: list[str]
) -> Narrowing:
    """The claim will say ``text``, with the re-verification's verdict (PENDING when no
    verifier could judge it); refused when another claim of the run says exactly this."""
    taken = Claim.objects.filter(run_id=claim.run_id, fingerprint=claim_fingerprint(text))
    if taken.exclude(pk=claim.pk).exists():
        raise DecisionRefused("Another claim of this run already says exactly this.")
    if result.available:
        status = result.status or Verdict.UNCERTAIN
        rationale = f"Re-verified after narrowing: {result.rationale}".strip()
        confidence = result.confidence
    else:
        status = Verdict.PENDING
        rationale = f"Narrowed; not re-verified: {result.reason}"
        confidence = None
    return Narrowing(text, status, rationale, confidence, allowed_scope, prohibited)


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


def do_carry_over_decisions(
    claim: Claim, history: list[ReviewDecision], reverification: Reverification | None
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
        return [_carry(locked, old, reverification) for old in history]


def _carry(
    claim: Claim, old: ReviewDecision, reverification: Reverification | None
) -> ReviewDecision:
    narrow = old.action == Action.NARROW
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
        reverification=reverification.to_json() if narrow and reverification else {},
        carried_from=old,
        override=old.override,
        verdict_at_decision=old.verdict_at_decision,
    )
    carried = f"carried over from run {old.claim.run.code}"
    if narrow:
        prohibited = list(old.prohibited_overstatements or [])
        result = reverification or Reverification(available=False)
        narrowing = _narrowing(claim, old.text_after, result, old.allowed_scope, prohibited)
        do_apply_review(claim, ReviewState.NARROWED, narrowing=narrowing)
    elif old.action == Action.APPROVE:
        why = f"approved by a reviewer ({carried})"
        disposition = _disposition(claim, DispositionState.KEPT, why)
        do_apply_review(claim, ReviewState.APPROVED, disposition=disposition)
    else:
        label = dict(REJECT_REASONS).get(old.reason_code, old.reason_code)
        why = f"rejected by a reviewer: {label} ({carried})"
        disposition = _disposition(claim, DispositionState.DROPPED, why)
        do_apply_review(
            claim, ReviewState.REJECTED, disposition=disposition, rejection_code=old.reason_code
        )
    return decision
