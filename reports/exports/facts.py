"""The typed records a report document is built from, loaded once per build.

``reports.inputs`` reads the ledger, the run and the review trail once and hands these
frozen records to ``reports.exports.document.build_document``; nothing here is a Django
model instance, so building a document runs no query. The string constants are the
stored values of the models' choices (``ledger.models.Relation``, ``review.models.Action``,
``research.models.StageStatus`` …) that the document compares against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

# Stored values of the models' TextChoices the document reads.
SUPPORTS = "supports"  # ledger.models.Relation.SUPPORTS
CONTRADICTS = "contradicts"  # ledger.models.Relation.CONTRADICTS
POSSIBLE_CONTRADICTION = "possible-contradiction"  # ledger.models.Relation.POSSIBLE
APPROVE = "approve"  # review.models.Action.APPROVE
NARROW = "narrow"  # review.models.Action.NARROW
STAGE_RUNNING = "running"  # research.models.StageStatus.RUNNING
STAGE_DONE = "done"  # research.models.StageStatus.DONE
SYNTHESIZING = "synthesizing"  # research.models.RunState.SYNTHESIZING


@dataclass(frozen=True)
class ProfileFacts:
    """What mining read about a source (``ledger.models.SourceProfile``)."""

    design: str
    population: str
    humans: bool | None
    year: int | None


@dataclass(frozen=True)
class SourceFacts:
    pk: int
    canonical_id: str
    title: str
    url: str
    doi: str
    arxiv_id: str
    publisher: str
    authors: tuple[Any, ...]
    source_type: str
    published_date: date | None
    cluster: str
    metadata: dict[str, Any]
    profile: ProfileFacts | None = None  # absent until mining profiled the source


@dataclass(frozen=True)
class SnapshotFacts:
    code: str
    text: str
    text_sha256: str
    fetched_at: datetime
    source: SourceFacts


@dataclass(frozen=True)
class PassageFacts:
    kind: str
    start: int
    end: int
    text: str
    fingerprint: str


@dataclass(frozen=True)
class VoteFacts:
    family: str
    verdict: str
    score: float | None
    valid: bool
    shadow: bool


@dataclass(frozen=True)
class LinkFacts:
    """One evidence link of a reported claim, with its passage, snapshot and votes."""

    pk: int
    relation: str
    quote: str
    quote_start: int
    quote_end: int
    score: float | None
    is_anchor: bool
    pool: str
    passage_fingerprint: str
    snapshot_pk: int
    snapshot: SnapshotFacts
    passage: PassageFacts
    votes: tuple[VoteFacts, ...] = ()


@dataclass(frozen=True)
class DecisionFacts:
    """One review decision (``review.models.ReviewDecision``)."""

    pk: int
    claim_code: str
    claim_text: str  # the claim's text now
    created_at: datetime
    reviewer: str  # username
    action: str
    claim_version: int
    reason_code: str
    reason: str
    text_before: str
    text_after: str
    override: bool
    verdict_at_decision: str
    carried_from: str = ""  # code of the earlier run's decision it carries over


@dataclass(frozen=True)
class ClaimFacts:
    """A claim of the run; reported claims carry their evidence links and decisions."""

    code: str
    text: str
    fingerprint: str
    status: str
    review_state: str
    disposition: str
    claim_type: str
    subquestion: str  # key, "" when none
    subquestion_text: str
    subquestion_position: int
    allowed_scope: str
    limitations: str
    confidence: float | None
    prohibited_overstatements: tuple[str, ...] = ()
    evidence: tuple[LinkFacts, ...] = ()
    decisions: tuple[DecisionFacts, ...] = ()  # oldest first
    unsupported: str = ""  # why an approved claim is printed with a mark


@dataclass(frozen=True)
class ExcludedClaim:
    """A claim the report does not state, with the reasons why."""

    claim: ClaimFacts
    reasons: list[str]


@dataclass(frozen=True)
class SetAsideFacts:
    """A candidate mining dropped before verification (its wording is never read)."""

    fingerprint: str
    subquestion: str
    claim_type: str
    reason: str
    canonical_id: str  # of its snapshot's source, "" without a snapshot
    snapshot_sha256: str
    quote_start: int | None
    quote_end: int | None


@dataclass(frozen=True)
class GapFacts:
    """What mining found for a subquestion without findings (``ledger.models.EvidenceGap``)."""

    passages: int
    candidates: int
    best_relevance: float | None


@dataclass(frozen=True)
class ContestedFacts:
    """Two claims reporting conflicting findings (``ledger.models.ContestedPair``)."""

    claim_code: str
    claim_text: str
    other_code: str
    other_text: str
    reason: str


@dataclass(frozen=True)
class QueryFacts:
    key: str
    text: str
    query_class: str
    enabled: bool


@dataclass(frozen=True)
class SubquestionFacts:
    key: str
    text: str
    dimension: str
    enabled: bool
    queries: tuple[QueryFacts, ...] = ()


@dataclass(frozen=True)
class PlanFacts:
    """The plan and the version the run ran, its content parsed once."""

    code: str
    question: str
    scope: str
    constraints: dict[str, Any]
    version: int
    version_hash: str
    subquestions: tuple[SubquestionFacts, ...] = ()

    def enabled_subquestions(self) -> tuple[tuple[str, str], ...]:
        """(key, text) of the enabled subquestions, in plan order."""
        return tuple((sub.key, sub.text) for sub in self.subquestions if sub.enabled)


@dataclass(frozen=True)
class CheckpointFacts:
    stage: str
    round: int
    status: str
    notes: dict[str, Any]
    label: str
    counters: dict[str, Any]


@dataclass(frozen=True)
class RunFacts:
    code: str
    state: str
    config: dict[str, Any]
    config_hash: str
    counters: dict[str, Any]
    started_at: datetime | None
    finished_at: datetime | None
    checkpoints: tuple[CheckpointFacts, ...] = ()  # by start time
    libraries: dict[str, str] = field(default_factory=dict)  # config's library: code -> name
    # source pk -> the library it was found in (the run's own first, else by name)
    source_libraries: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GapWording:
    """The planner's reading of the question (``analyze_question``, ``field_register``),
    in the words a gap row says what would answer it."""

    subject: str
    outcome: str
    population: str
    other: str  # what the question compares its subject with, if it says
    studies: str
    designs: str
    variant_nouns: str
    compared_with: str
    origins: str
