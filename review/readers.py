"""Read-only views of a run's review for its pages: the queue, the audit trail and a
claim's evidence in context. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.db.models import Count, Q, QuerySet

from ledger.models import Claim, EvidenceLink, ReviewState, VerifierVote
from research.models import Run
from review.models import ReviewDecision
from review.services.gate import (
    BLOCKING,
    CONTRARY,
    FLAGGED,
    gate_status,
    is_flagged,
    ledger_claims,
    review_order,
)


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
