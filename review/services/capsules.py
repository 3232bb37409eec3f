"""Capsules: the approved claims a report may be built from, with their cited quotes.

``approved_capsules(run)`` is the one reader that builds them
(``research.pipeline.synthesize.Capsule``, the type synthesis reads): the report loader
(``reports.inputs``), the report preview and the integrity check call it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ledger.models import Claim, EvidenceLink, Relation, ReviewState, Source, Verdict
from research.models import Run
from research.pipeline.claims.facets import facets
from research.pipeline.synthesize import Capsule, CapsuleEvidence
from review.models import Action, ReviewDecision
from review.services.gate import ledger_claims, review_order


def approved_capsules(run: Run) -> list[Capsule]:
    """Claims whose latest decision is an approval of their current text, in review order.

    A claim whose verdict is not PASS counts only when that approval is an override
    (a reviewer's written reason; the capsule says so). The gate is not checked here:
    callers check ``gate_status(run).open`` first.
    """
    claims = (
        review_order(ledger_claims(run).filter(review_state=ReviewState.APPROVED))
        .select_related("subquestion")
        .prefetch_related(
            "decisions__reviewer", "evidence__passage", "evidence__snapshot__source__profile"
        )
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
    marked = bool(unsupported_reason(claim))
    stated = facets(claim.text)
    return Capsule(
        code=str(claim.code),
        text=claim.text,
        fingerprint=claim.fingerprint,
        subquestion_key=sub.key if sub else "",
        subquestion_text=sub.text if sub else "",
        subquestion_position=sub.position if sub else 0,
        allowed_scope=claim.allowed_scope,
        prohibited_overstatements=tuple(claim.prohibited_overstatements or ()),
        limitations=claim.limitations,
        confidence=claim.confidence,
        claim_type=claim.claim_type,
        # An approved claim without verified support is printed, marked, citing its anchor.
        evidence=tuple(
            _evidence(span)
            for span in cited_spans(claim.evidence.all(), override=approval.override or marked)
        ),
        # Read from the approved wording (a narrowed claim says less than it was mined as).
        direction=stated.direction,
        effect=stated.effect,
        marked=marked,
        status=claim.status,
        independent_sources=claim.independent_sources,
        approved_by=approval.reviewer.get_username(),
        approved_at=approval.created_at,
        decision_code=str(approval.code),
        override=approval.override,
        override_reason=approval.reason if approval.override else "",
        overridden_verdict=approval.verdict_at_decision if approval.override else "",
    )


def unsupported_reason(claim: Claim) -> str:
    """Why an approved claim is printed with a mark, or "" when it needs none."""
    supported = any(link.relation == Relation.SUPPORTS for link in claim.evidence.all())
    if claim.status == Verdict.PASS and supported:
        return ""
    verdict = claim.get_status_display()
    if supported:
        return f"approved by a reviewer against the verifiers' verdict {verdict}"
    return (
        f"approved by a reviewer against the verifiers' verdict {verdict}: no verified "
        "supporting quote, so it cites the sentence it was mined from"
    )


# --- cited quotes ---------------------------------------------------------------------


def _link_order(link: EvidenceLink) -> tuple[str, int, int, str, int]:
    return (link.passage.kind, link.passage.start, link.passage.end, link.pool, link.pk)


def cited_spans(
    links: Iterable[EvidenceLink], *, override: bool = False
) -> list[tuple[EvidenceLink, ...]]:
    """A claim's supporting links grouped by the span they quote, in a fixed order.

    Only ``supports`` links are cited (never background or contradicting quotes). A claim
    a reviewer approved by *override* that no verifier found supported cites its anchor
    (the sentence it was mined from), so it never silently drops out of the report. Each
    group starts with the link that first quoted the span, the others after it; groups
    are ordered: the anchor sentence's span first, then best score, then source,
    snapshot and offsets.
    """
    links = list(links)
    cited = [link for link in links if link.relation == Relation.SUPPORTS]
    if override and not cited:
        cited = [link for link in links if link.is_anchor]
    spans: dict[tuple[int, int, int], list[EvidenceLink]] = {}
    for link in cited:
        spans.setdefault((link.snapshot_id, link.quote_start, link.quote_end), []).append(link)
    return sorted(
        (tuple(group) for group in spans.values()),
        key=lambda group: (
            not any(link.is_anchor for link in group),
            -max((link.score or 0.0) for link in group),
            group[0].snapshot.source.canonical_id,
            group[0].snapshot.text_sha256,
            group[0].quote_start,
            group[0].quote_end,
        ),
    )


def _evidence(span: tuple[EvidenceLink, ...]) -> CapsuleEvidence:
    first, ordered = span[0], sorted(span, key=_link_order)
    source = first.snapshot.source
    return CapsuleEvidence(
        source_key=source.canonical_id,
        quote=first.quote,
        quote_start=first.quote_start,
        quote_end=first.quote_end,
        snapshot_sha256=first.snapshot.text_sha256,
        passage_fingerprint=ordered[0].passage_fingerprint,
        cluster=source.cluster,
        design=_profile(source, "design"),
        studied=" ".join(p for p in (source.title or "", _profile(source, "population")) if p),
        snapshot_code=str(first.snapshot.code),
        link_ids=tuple(link.pk for link in ordered),
    )


def _profile(source: Source, field: str) -> str:
    """A field of what mining read about the source ("" until mining profiled it)."""
    profile = getattr(source, "profile", None)  # one-to-one: absent until mining wrote it
    return str(getattr(profile, field)) if profile is not None else ""


def last_approval(claim: Claim) -> ReviewDecision | None:
    """The approval that stands (the claim is approved and this was its last decision)."""
    if claim.review_state != ReviewState.APPROVED:
        return None
    last = claim.decisions.select_related("reviewer").order_by("created_at", "pk").last()
    return last if last is not None and last.action == Action.APPROVE else None
