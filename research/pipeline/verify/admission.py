"""Binding in code: a verifier may judge only admitted claim–evidence pairs.

Evidence is admitted when its text still matches its fingerprint and any quote cited
for it occurs verbatim in it. A vote is admitted when it names this claim and an
admitted item, carries the fingerprints of the texts as they are now, quotes the
passage verbatim with a quote long enough to mean something (for supports and
contradicts), and is the first vote of its verifier on that pair. Everything else is
discarded with a reason and counted, never silently dropped and never counted as a vote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from research.pipeline.language.lexicon import is_meaningful_quote
from research.pipeline.text import passage_fingerprint
from research.pipeline.verify.records import (
    ClaimInput,
    DiscardedVote,
    EvidenceItem,
    RejectedEvidence,
    Vote,
    VoteVerdict,
)

# Reasons, as stored on discarded votes and counted in the run record.
UNKNOWN_CLAIM = "vote for another claim id"
INVENTED_EVIDENCE = "invented evidence id"
STALE_CLAIM = "stale claim fingerprint"
STALE_EVIDENCE = "stale evidence fingerprint"
DUPLICATE = "duplicate vote"
FABRICATED_QUOTE = "quote not verbatim in the passage"
SHORT_QUOTE = "quote too short to mean anything"
MISSING_QUOTE = "verdict without a quote"
BAD_VERDICT = "unknown verdict"
BAD_SCORE = "score outside [0, 1]"
PASSAGE_CHANGED = "passage text does not match its fingerprint"
CITED_QUOTE_MISSING = "cited quote not found in the passage"


@dataclass(frozen=True)
class QuotePolicy:
    min_chars: int = 20
    min_content_words: int = 3


def admit_evidence(
    items: Iterable[EvidenceItem], policy: QuotePolicy | None = None
) -> tuple[list[EvidenceItem], list[RejectedEvidence]]:
    """Keep items whose text matches their fingerprint and whose cited quote is real."""
    policy = policy or QuotePolicy()
    admitted: list[EvidenceItem] = []
    rejected: list[RejectedEvidence] = []
    seen: set[str] = set()
    for item in items:
        if item.evidence_id in seen:
            continue
        if passage_fingerprint(item.text) != item.fingerprint:
            rejected.append(RejectedEvidence(item, PASSAGE_CHANGED))
        elif item.cited_quote and not _quote_ok(item.cited_quote, item.text, policy):
            rejected.append(RejectedEvidence(item, CITED_QUOTE_MISSING))
        else:
            admitted.append(item)
            seen.add(item.evidence_id)
    return admitted, rejected


def _quote_ok(quote: str, text: str, policy: QuotePolicy) -> bool:
    return quote in text and is_meaningful_quote(
        quote, min_chars=policy.min_chars, min_content_words=policy.min_content_words
    )


def admit_votes(
    claim: ClaimInput,
    items: Sequence[EvidenceItem],
    votes: Iterable[Vote],
    policy: QuotePolicy | None = None,
) -> tuple[list[Vote], list[DiscardedVote]]:
    """Split votes into admitted ones and discarded ones with their reasons."""
    policy = policy or QuotePolicy()
    by_id = {item.evidence_id: item for item in items}
    admitted: list[Vote] = []
    discarded: list[DiscardedVote] = []
    seen: set[tuple[str, str]] = set()
    for vote in votes:
        reason = _reject_reason(claim, by_id, vote, policy)
        if reason is None and (vote.verifier, vote.evidence_id) in seen:
            reason = DUPLICATE
        if reason is None:
            seen.add((vote.verifier, vote.evidence_id))
            admitted.append(vote)
        else:
            discarded.append(DiscardedVote(vote, reason))
    return admitted, discarded


def _reject_reason(
    claim: ClaimInput, by_id: dict[str, EvidenceItem], vote: Vote, policy: QuotePolicy
) -> str | None:
    item = by_id.get(vote.evidence_id)
    checks: list[tuple[bool, str]] = [
        (vote.claim_id != claim.claim_id, UNKNOWN_CLAIM),
        (item is None, INVENTED_EVIDENCE),
        (vote.claim_fingerprint != claim.fingerprint, STALE_CLAIM),
        (item is not None and vote.evidence_fingerprint != item.fingerprint, STALE_EVIDENCE),
        (vote.verdict not in set(VoteVerdict), BAD_VERDICT),
        (not 0.0 <= vote.score <= 1.0, BAD_SCORE),
    ]
    for failed, reason in checks:
        if failed:
            return reason
    assert item is not None
    decisive = vote.verdict in (VoteVerdict.SUPPORTS, VoteVerdict.CONTRADICTS)
    if not vote.quote:
        return MISSING_QUOTE if decisive else None
    if vote.quote not in item.text:
        return FABRICATED_QUOTE
    if decisive and not is_meaningful_quote(
        vote.quote, min_chars=policy.min_chars, min_content_words=policy.min_content_words
    ):
        return SHORT_QUOTE
    return None
