"""Typed records of the verification stage: claims in, evidence pools, votes, verdicts.

Ids are strings so that any store can supply them (a passage pk, a content hash, a
corpus's ``doc_id``). Offsets inside :class:`EvidenceItem` are relative to ``text``;
``snapshot_start`` maps them to the snapshot text the quote must be found in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from research.pipeline.text import claim_fingerprint


class PoolName(StrEnum):
    SUPPORT = "support"
    REFUTE = "refute"
    BACKGROUND = "background"


class VoteVerdict(StrEnum):
    """The four labels a verifier may give a claim–passage pair (seed 002).

    ``unverifiable``: the claim cannot be checked with this material at all (a forecast
    beyond the source's horizon, a claim with nothing checkable in it).
    """

    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    INSUFFICIENT = "insufficient"
    UNVERIFIABLE = "unverifiable"


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNCERTAIN = "uncertain"
    UNVERIFIABLE = "unverifiable"  # no valid vote from any judging family


class Flag(StrEnum):
    """What a reviewer should look at before trusting a verdict; rare on purpose.

    A flag says something the status does not: an UNCERTAIN claim is not flagged
    "uncertain", and a PASS from one source is flagged ``single-source`` only when the
    claim needs corroboration (high impact or triangulated types).
    """

    HIGH_IMPACT = "high-impact"
    CONFLICTING = "conflicting-evidence"
    POSSIBLE_CONTRADICTION = "possible-contradiction"
    SINGLE_SOURCE = "single-source"
    LOW_QUALITY = "low-quality-support"
    SAFETY = "safety-sensitive"
    NO_REFUTE_POOL = "no-counter-evidence-searched"
    OVERSTATEMENT = "overstatement"
    SCOPE_GAP = "scope-gap"
    FAMILY_UNAVAILABLE = "verifier-unavailable"


@dataclass(frozen=True)
class ClaimInput:
    """The claim a verifier judges; ``fingerprint`` binds every vote to this wording."""

    claim_id: str
    text: str
    claim_type: str = "empirical"
    entities: tuple[str, ...] = ()
    hedges: tuple[str, ...] = ()
    time_sensitive: bool = False
    high_impact: bool = False
    needs_triangulation: bool = False
    fingerprint: str = ""

    def __post_init__(self) -> None:
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", claim_fingerprint(self.text))


@dataclass(frozen=True)
class EvidenceItem:
    """One passage in one pool of one claim, with everything needed to bind a quote."""

    evidence_id: str
    text: str
    fingerprint: str
    pool: PoolName = PoolName.SUPPORT
    passage_id: str = ""
    snapshot_start: int = 0
    sentences: tuple[tuple[int, int], ...] = ()
    source_key: str = ""
    publisher: str = ""
    cluster: str = ""
    source_type: str = ""
    title: str = ""
    published: str = ""  # ISO date, empty when unknown
    fetched_at: str = ""  # ISO datetime of the snapshot
    score: float = 0.0
    cited_quote: str = ""  # a quote someone claims is in this passage (checked on admission)
    anchor: bool = False  # the passage the claim was mined from (its own source)

    @property
    def independence_key(self) -> str:
        """Near-duplicate cluster, else canonical source, else the passage itself."""
        return self.cluster or self.source_key or self.evidence_id


@dataclass(frozen=True)
class Vote:
    """One verifier's judgement of one claim–evidence pair, bound by fingerprints."""

    verifier: str
    family: str  # rules, learned, nli, llm
    claim_id: str
    evidence_id: str
    verdict: str
    score: float
    claim_fingerprint: str
    evidence_fingerprint: str
    quote: str = ""
    rationale: str = ""
    flags: tuple[str, ...] = ()
    shadow: bool = False  # cast by a family in shadow mode: stored and shown, never counted

    @classmethod
    def bind(
        cls,
        verifier: str,
        family: str,
        claim: ClaimInput,
        item: EvidenceItem,
        *,
        verdict: str,
        score: float,
        quote: str = "",
        rationale: str = "",
        flags: tuple[str, ...] = (),
    ) -> Vote:
        """A vote on an admitted pair, carrying both fingerprints it was judged against.

        For local verifiers that judge the pair they were given; an LLM judge names its
        own evidence id instead, which admission then checks.
        """
        return cls(
            verifier=verifier,
            family=family,
            claim_id=claim.claim_id,
            evidence_id=item.evidence_id,
            verdict=verdict,
            score=round(score, 4),
            claim_fingerprint=claim.fingerprint,
            evidence_fingerprint=item.fingerprint,
            quote=quote,
            rationale=rationale,
            flags=flags,
        )


@dataclass(frozen=True)
class DiscardedVote:
    vote: Vote
    reason: str


@dataclass(frozen=True)
class RejectedEvidence:
    item: EvidenceItem
    reason: str


@dataclass(frozen=True)
class Pools:
    """The evidence a claim is judged against: never only support."""

    support: tuple[EvidenceItem, ...] = ()
    refute: tuple[EvidenceItem, ...] = ()
    background: tuple[EvidenceItem, ...] = ()

    def items(self) -> list[EvidenceItem]:
        """All items, each once (first pool wins: support, refute, background)."""
        seen: set[str] = set()
        out: list[EvidenceItem] = []
        for item in (*self.support, *self.refute, *self.background):
            if item.evidence_id not in seen:
                seen.add(item.evidence_id)
                out.append(item)
        return out


@dataclass
class ClaimVerdict:
    """The aggregated outcome for one claim, in words a reviewer can read."""

    claim_id: str
    claim_fingerprint: str
    status: Status
    rationale: str
    confidence: float
    flags: list[str] = field(default_factory=list)
    relations: dict[str, str] = field(default_factory=dict)  # evidence id -> relation
    quotes: dict[str, str] = field(default_factory=dict)  # evidence id -> best quote
    support_ids: list[str] = field(default_factory=list)
    refute_ids: list[str] = field(default_factory=list)
    independent_sources: int = 0
    votes: list[Vote] = field(default_factory=list)
    discarded: list[DiscardedVote] = field(default_factory=list)
    rejected_evidence: list[RejectedEvidence] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)  # verifier -> why it did not vote
    # Counted families that were configured but failed on this claim: family -> why.
    unavailable: dict[str, str] = field(default_factory=dict)
    # What the verdict would have been had the shadow families counted ("" without any).
    shadow_status: str = ""
    # Contradictions set aside as not credible: evidence id -> why (shown, flagged).
    possible_contradictions: dict[str, str] = field(default_factory=dict)
    quorum: int = 2

    def discard_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for d in self.discarded:
            counts[d.reason] = counts.get(d.reason, 0) + 1
        for r in self.rejected_evidence:
            counts[r.reason] = counts.get(r.reason, 0) + 1
        return counts
