"""Counted verifier votes for review scenes (the factories make links, not votes)."""

from __future__ import annotations

from ledger.models import Claim, VerifierVote


def add_vote(claim: Claim, family: str, verdict: str, score: float, **fields) -> VerifierVote:
    link = claim.evidence.order_by("pk").first()
    return VerifierVote.objects.create(
        claim=claim,
        evidence=link,
        verifier=fields.pop("verifier", f"{family}-judge"),
        family=family,
        verdict=verdict,
        score=score,
        quote=link.quote if link else "",
        **fields,
    )


def add_support_votes(claim: Claim, families=("learned", "align"), score: float = 0.8) -> None:
    """A counted *supports* vote from each family, at a strong calibrated score."""
    for family in families:
        add_vote(claim, family, "supports", score)
