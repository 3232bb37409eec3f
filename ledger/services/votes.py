"""The only writer of VerifierVote rows: every vote cast, counted or discarded with why."""

from __future__ import annotations

from dataclasses import dataclass

from ledger.models import Claim, EvidenceLink, Relation, VerifierVote
from research.pipeline.verify.records import ClaimVerdict


@dataclass(frozen=True)
class VoteCounts:
    """Votes judged for one verdict: valid ones and discarded ones (stored or not)."""

    votes: int = 0
    discarded: int = 0


def do_save_votes(
    claim: Claim, verdict: ClaimVerdict, links: dict[str, EvidenceLink]
) -> VoteCounts:
    """Valid votes, then discarded ones where the (claim, evidence, verifier) slot is free.

    A vote whose slot is taken (a retried stage, or a discarded duplicate) is counted but
    not stored twice.
    """
    used: set[tuple[int | None, str]] = set(claim.votes.values_list("evidence_id", "verifier"))
    votes = discarded = 0
    rows = [(v, "") for v in verdict.votes] + [(d.vote, d.reason) for d in verdict.discarded]
    for vote, reason in rows:
        link = links.get(vote.evidence_id)
        key = (link.pk if link else None, vote.verifier)
        if reason:
            discarded += 1
        else:
            votes += 1
        if key in used:
            continue
        used.add(key)
        VerifierVote.objects.create(
            claim=claim,
            evidence=link,
            verifier=vote.verifier[:60],
            family=vote.family[:20],
            verdict=vote.verdict if not reason else _safe_verdict(vote.verdict),
            score=vote.score if 0.0 <= vote.score <= 1.0 else None,
            quote=vote.quote,
            rationale=vote.rationale,
            valid=not reason,
            discard_reason=reason[:200],
            shadow=vote.shadow,
        )
    return VoteCounts(votes=votes, discarded=discarded)


def _safe_verdict(verdict: str) -> str:
    return verdict if verdict in Relation.values else Relation.INSUFFICIENT
