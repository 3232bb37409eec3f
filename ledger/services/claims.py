"""The writer of Claim rows: what mining found, and what review changed.

``do_save_claims(run, MiningResult, subquestion)`` turns the pure miner's result into
claims (with their anchor links and a first disposition) and a Candidate row for every
proposition, kept, merged or dropped with its reason. ``do_apply_review`` writes a
reviewer's decision onto the claim (the decision row itself is review's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db import transaction

from ledger.models import (
    CandidateState,
    Claim,
    Direction,
    DispositionState,
    ReviewState,
    StudyDesign,
)
from ledger.services.candidates import do_record_candidate
from ledger.services.dispositions import do_dispose, record_disposition
from ledger.services.evidence import Binding, bind_anchor, do_link_anchor
from research.models import Run, Subquestion
from research.pipeline.claims.records import (
    ClaimDraft,
    DroppedCandidate,
    MergedCandidate,
    MiningResult,
)
from research.pipeline.text import claim_fingerprint


def do_save_claims(
    run: Run, result: MiningResult, subquestion: Subquestion | None = None
) -> list[Claim]:
    """The claims this mining result adds or extends; a candidate row for everything in it.

    Only a proposition with at least one anchor that still matches its snapshot becomes
    a claim (and goes on to counter-evidence and verification). The rest are recorded as
    dropped candidates with the reason, merged wordings as merged candidates. Idempotent:
    saving the same result twice adds nothing.
    """
    with transaction.atomic():
        saved = [c for c in (_save_draft(run, subquestion, d) for d in result.claims) if c]
        for candidate in result.dropped:
            _save_dropped(run, subquestion, candidate)
    return saved


def do_save_mining(
    run: Run, results: Mapping[str, MiningResult], subquestions: Mapping[str, Subquestion]
) -> list[Claim]:
    """A whole run's mining in one transaction: every subquestion's claims first, then the
    candidates merged into them, then the dropped ones (so a candidate can point at a
    claim of any subquestion). Idempotent like :func:`do_save_claims`."""
    with transaction.atomic():
        saved: list[Claim] = []
        for key, result in results.items():
            sq = subquestions.get(key)
            saved += [c for c in (_save_draft(run, sq, d) for d in result.claims) if c]
        for key, result in results.items():
            for merged in result.merged:
                _save_merged(run, subquestions.get(key), merged)
        for key, result in results.items():
            for dropped in result.dropped:
                _save_dropped(run, subquestions.get(key), dropped)
    return saved


def _found(draft: ClaimDraft) -> dict[str, object]:
    """What mining found out about the finding, as Claim fields."""
    facets = draft.facets
    relevance = draft.relevance
    fields: dict[str, object] = {
        "relevance": relevance.score if relevance else None,
        "relevance_parts": relevance.to_json() if relevance else {},
        "rank": draft.rank or None,
        "role": draft.role,
        "study_design": draft.design if draft.design in StudyDesign.values else "",
    }
    if facets is not None:
        fields |= {
            "population": facets.population,
            "intervention": facets.intervention,
            "outcome": facets.outcome,
            "direction": facets.direction if facets.direction in Direction.values else "",
            "effect": facets.effect,
            "year": facets.year,
        }
    return fields


def _save_draft(run: Run, subquestion: Subquestion | None, draft: ClaimDraft) -> Claim | None:
    bound = [(a, b) for a in draft.anchors if (b := bind_anchor(a)) is not None]
    if not bound:
        do_record_candidate(
            run,
            subquestion,
            draft.text,
            CandidateState.DROPPED,
            "its source sentence no longer matches the snapshot text",
            claim_type=draft.claim_type,
            origin=draft.origin,
        )
        return None
    claim, created = Claim.objects.get_or_create(
        run=run,
        fingerprint=draft.fingerprint,
        defaults={
            "subquestion": subquestion,
            "text": draft.text,
            "claim_type": draft.claim_type,
            "entities": draft.entities,
            "numbers": draft.numbers,
            "hedges": draft.hedges,
            "time_sensitive": draft.time_sensitive,
            **_found(draft),
        },
    )
    for anchor, binding in bound:
        do_link_anchor(claim, anchor, binding)
    sources = len({a.source_key for a, _ in bound})
    where = f"from {len(bound)} passage(s) of {sources} source(s)"
    if draft.relevance is not None:
        where += f", relevance {draft.relevance.score:.2f}, rank {draft.rank}"
        if draft.relevance.outcome_match:
            where += f", outcome named: {draft.relevance.outcome_match}"
    if created:
        merged = f"; merged wordings: {draft.mentions}" if draft.mentions else ""
        do_dispose(
            claim, DispositionState.PENDING, f"mined ({draft.origin}) {where}{merged}", "mining"
        )
        state, reason = CandidateState.KEPT, f"became a claim; mined {where}"
    else:
        state = CandidateState.MERGED
        reason = "the same proposition was already a claim of this run; its anchors were added"
    do_record_candidate(
        run,
        subquestion,
        draft.text,
        state,
        reason,
        claim=claim,
        claim_type=draft.claim_type,
        origin=draft.origin,
        binding=bound[0][1],
        relevance=draft.relevance.score if draft.relevance else None,
        role=draft.role,
        design=draft.design,
    )
    for wording in draft.mentions:
        do_record_candidate(
            run,
            subquestion,
            wording,
            CandidateState.MERGED,
            "another wording of the same finding (same content words and numbers, or the "
            "same meaning, direction and numbers)",
            claim=claim,
            claim_type=draft.claim_type,
            origin=draft.origin,
            role=draft.role,
        )
    return claim


def _save_merged(run: Run, subquestion: Subquestion | None, merged: MergedCandidate) -> bool:
    claim = Claim.objects.filter(run=run, fingerprint=merged.target).first()
    binding = bind_anchor(merged.anchor) if merged.anchor.quote else None
    if claim is None:
        reason = "its claim was not saved (the anchor no longer matches the snapshot)"
        state = CandidateState.DROPPED
    else:
        state, reason = CandidateState.MERGED, merged.reason
        if binding is not None:
            do_link_anchor(claim, merged.anchor, binding)
    _record_set_aside(run, subquestion, merged, state, reason, claim, binding)
    return claim is not None


def _save_dropped(run: Run, subquestion: Subquestion | None, dropped: DroppedCandidate) -> None:
    """A dropped candidate; merged instead when its proposition is a claim already.

    A subquestion's claim budget is spent before propositions are matched across
    subquestions, so a candidate over budget here may already be a claim from another
    subquestion: its source sentence then becomes one more anchor of that claim.
    """
    binding = bind_anchor(dropped.anchor) if dropped.anchor.quote else None
    claim = Claim.objects.filter(run=run, fingerprint=claim_fingerprint(dropped.text)).first()
    if claim is not None and binding is not None:
        do_link_anchor(claim, dropped.anchor, binding)
        state = CandidateState.MERGED
        reason = f"{dropped.reason}; already a claim of this run, its source sentence was added"
    else:
        state, reason, claim = CandidateState.DROPPED, dropped.reason, None
    _record_set_aside(run, subquestion, dropped, state, reason, claim, binding)


def _record_set_aside(
    run: Run,
    subquestion: Subquestion | None,
    candidate: DroppedCandidate | MergedCandidate,
    state: str,
    reason: str,
    claim: Claim | None,
    binding: Binding | None,
) -> None:
    """A candidate that did not become a claim of its own, with what mining knew of it."""
    do_record_candidate(
        run,
        subquestion,
        candidate.text,
        state,
        reason,
        claim=claim,
        claim_type=candidate.claim_type,
        binding=binding,
        relevance=candidate.relevance,
        role=candidate.role,
        design=candidate.design,
    )


# --- review -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Narrowing:
    """A reviewer's narrower wording and what re-verifying it decided."""

    text: str
    status: str  # a Verdict value; PENDING when no verifier could judge it
    rationale: str
    confidence: float | None
    allowed_scope: str = ""
    prohibited_overstatements: list[str] = field(default_factory=list)


def do_apply_review(
    claim: Claim,
    review_state: str,
    *,
    disposition: tuple[str, str] | None = None,
    narrowing: Narrowing | None = None,
    rejection_code: str = "",
) -> Claim:
    """A review decision on the claim: its review state, version, and what changed.

    ``disposition`` is ``(state, reason)`` when the decision changes it (recorded in
    the claim's disposition history); ``narrowing`` replaces the wording, its
    fingerprint, verdict and capsule scope; ``rejection_code`` is the reason code of a
    rejection (kept only while the claim stays rejected).
    """
    fields = ["review_state", "rejection_code", "version"]
    if disposition is not None:
        record_disposition(claim, *disposition, stage="review")
        fields += ["disposition", "disposition_reason"]
    if narrowing is not None:
        claim.text = narrowing.text
        claim.fingerprint = claim_fingerprint(narrowing.text)
        claim.status = narrowing.status
        claim.rationale = narrowing.rationale
        claim.confidence = narrowing.confidence
        claim.allowed_scope = narrowing.allowed_scope
        claim.prohibited_overstatements = narrowing.prohibited_overstatements
        fields += [
            "text",
            "fingerprint",
            "status",
            "rationale",
            "confidence",
            "allowed_scope",
            "prohibited_overstatements",
        ]
    claim.review_state = review_state
    claim.rejection_code = rejection_code if review_state == ReviewState.REJECTED else ""
    claim.version += 1
    claim.save(update_fields=fields)
    return claim
