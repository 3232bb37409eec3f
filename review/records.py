"""Typed records review stores in JSON columns, parsed at that boundary.

``Reverification`` is what re-verifying a narrowed text found: ``reverify`` returns one,
a narrow decision stores it (``ReviewDecision.reverification`` holds ``to_json()``) and
every reader gets it back through ``ReviewDecision.reverified``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from research.pipeline.verify.records import ClaimVerdict, Vote


def _score(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class ReverificationVote:
    """One verifier's vote on the narrowed text against one passage of the evidence."""

    verifier: str
    family: str  # rules, learned, nli, llm
    verdict: str  # supports, contradicts, insufficient, unverifiable
    score: float | None
    quote: str = ""
    rationale: str = ""

    @classmethod
    def of_vote(cls, vote: Vote) -> ReverificationVote:
        return cls(
            verifier=str(vote.verifier or ""),
            family=str(vote.family or ""),
            verdict=str(vote.verdict or ""),
            score=vote.score,
            quote=str(vote.quote or ""),
            rationale=str(vote.rationale or ""),
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReverificationVote:
        return cls(
            verifier=str(data.get("verifier") or ""),
            family=str(data.get("family") or ""),
            verdict=str(data.get("verdict") or ""),
            score=_score(data.get("score")),
            quote=str(data.get("quote") or ""),
            rationale=str(data.get("rationale") or ""),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "verifier": self.verifier,
            "family": self.family,
            "verdict": self.verdict,
            "score": self.score,
            "quote": self.quote,
            "rationale": self.rationale,
        }


@dataclass(frozen=True)
class Reverification:
    """A narrowed text re-verified against the claim's evidence, or why it was not.

    ``available`` is False when no verifier could judge it; then only ``reason`` says
    anything and ``status`` is empty. A decision that re-verified nothing (an approval, a
    rejection: its column is ``{}``) reads as unavailable with no reason.
    """

    available: bool
    status: str = ""  # pass, fail, uncertain, unverifiable ("" when not available)
    rationale: str = ""
    confidence: float | None = None
    fingerprint: str = ""  # the narrowed text's claim fingerprint the votes were bound to
    flags: tuple[str, ...] = ()
    votes: tuple[ReverificationVote, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)  # verifier -> why it did not vote
    reason: str = ""  # why it was not re-verified

    @classmethod
    def unavailable(cls, reason: str) -> Reverification:
        return cls(available=False, reason=reason)

    @classmethod
    def of_verdict(cls, verdict: ClaimVerdict) -> Reverification:
        return cls(
            available=True,
            status=str(verdict.status).lower(),
            rationale=str(verdict.rationale or ""),
            confidence=verdict.confidence,
            fingerprint=str(verdict.claim_fingerprint or ""),
            flags=tuple(str(f) for f in verdict.flags),
            votes=tuple(ReverificationVote.of_vote(v) for v in verdict.votes),
            notes={str(k): str(v) for k, v in verdict.notes.items()},
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reverification:
        """Read a stored column, of any shape written so far (``{}`` included)."""
        status = str(data.get("status") or "")
        return cls(
            available=bool(data.get("available", bool(status))),
            status=status,
            rationale=str(data.get("rationale") or ""),
            confidence=_score(data.get("confidence")),
            fingerprint=str(data.get("fingerprint") or ""),
            flags=tuple(str(f) for f in data.get("flags") or []),
            votes=tuple(ReverificationVote.from_json(v) for v in data.get("votes") or []),
            notes={str(k): str(v) for k, v in (data.get("notes") or {}).items()},
            reason=str(data.get("reason") or ""),
        )

    def to_json(self) -> dict[str, Any]:
        """The stored shape: ``{"available": False, "reason": …}`` when not re-verified."""
        if not self.available:
            return {"available": False, "reason": self.reason}
        data: dict[str, Any] = {
            "available": True,
            "status": self.status,
            "rationale": self.rationale,
            "confidence": self.confidence,
            "fingerprint": self.fingerprint,
            "flags": list(self.flags),
            "votes": [vote.to_json() for vote in self.votes],
            "notes": dict(self.notes),
        }
        if self.reason:
            data["reason"] = self.reason
        return data
