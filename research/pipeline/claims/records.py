"""Typed records of claim mining: passages in, claim drafts and dropped candidates out.

Offsets in :class:`Anchor` are relative to the passage text; ``snapshot_start`` maps
them into the snapshot text, where the ledger service checks them again before saving.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from research.pipeline.claims.design import SourceProfile
from research.pipeline.claims.facets import Facets
from research.pipeline.claims.relevance import Relevance, shipped_off_topic
from research.pipeline.claims.scope import Scope


@dataclass(frozen=True)
class PassageInput:
    """One evidence passage of a subquestion, as the miner sees it."""

    passage_id: str
    text: str
    fingerprint: str
    snapshot_start: int = 0
    sentences: tuple[tuple[int, int], ...] = ()  # relative to ``text``
    source_key: str = ""
    publisher: str = ""
    cluster: str = ""
    score: float = 0.0
    pool: str = "support"
    title: str = ""  # the source's title (context for relevance; never mined)
    label: str = ""  # the structure label or heading in force where the passage begins


@dataclass(frozen=True)
class Anchor:
    """The source sentence a claim was mined from: ``passage.text[start:end] == quote``."""

    passage_id: str
    quote: str
    start: int
    end: int
    passage_fingerprint: str
    snapshot_start: int = 0
    source_key: str = ""

    @property
    def snapshot_span(self) -> tuple[int, int]:
        return self.snapshot_start + self.start, self.snapshot_start + self.end


@dataclass
class ClaimDraft:
    """An atomic claim with its anchors (several when merged across passages)."""

    text: str
    fingerprint: str
    claim_type: str
    anchors: list[Anchor]
    entities: list[str] = field(default_factory=list)
    numbers: list[dict[str, Any]] = field(default_factory=list)
    hedges: list[str] = field(default_factory=list)
    time_sensitivity: str = "stable"  # stable, slow-changing, fast-changing, current-state
    origin: str = "rules"  # rules or llm:<model>
    mentions: list[str] = field(default_factory=list)  # other wordings merged into this one
    score: float = 0.0  # ranking score (relevance, role, scope preference)
    role: str = ""  # result, conclusion or statement (research.pipeline.claims.roles)
    relevance: Relevance | None = None
    facets: Facets | None = None
    design: str = ""  # the strongest study design among its anchors' sources
    rank: int = 0  # 1 = the run's most relevant claim

    @property
    def time_sensitive(self) -> bool:
        return self.time_sensitivity in ("fast-changing", "current-state")

    @property
    def independent_keys(self) -> set[str]:
        return {a.source_key or a.passage_id for a in self.anchors}


@dataclass(frozen=True)
class DroppedCandidate:
    """A candidate claim that did not make it, with the reason (nothing vanishes)."""

    text: str
    reason: str
    anchor: Anchor
    claim_type: str = ""
    relevance: float | None = None
    role: str = ""
    design: str = ""


@dataclass(frozen=True)
class MergedCandidate:
    """A candidate that is the same proposition as a claim kept under another subquestion."""

    text: str
    target: str  # the fingerprint of the claim it was merged into
    anchor: Anchor
    reason: str
    claim_type: str = ""
    relevance: float | None = None
    role: str = ""
    design: str = ""


@dataclass(frozen=True)
class ContestedPair:
    """Two kept claims that report conflicting findings on the same question."""

    first: str  # claim fingerprints
    second: str
    reason: str


@dataclass(frozen=True)
class EvidenceGapDraft:
    """A subquestion for which the library held no relevant finding, and what was searched."""

    subquestion: str  # key
    queries: tuple[str, ...]
    passages: int  # passages read
    candidates: int  # sentences considered
    best_relevance: float | None
    reason: str


@dataclass
class MiningResult:
    claims: list[ClaimDraft]
    dropped: list[DroppedCandidate] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    merged: list[MergedCandidate] = field(default_factory=list)


@dataclass
class RunMining:
    """Mining of a whole run: per subquestion, and what spans subquestions."""

    results: dict[str, MiningResult]  # subquestion key -> its claims and candidates
    contested: list[ContestedPair] = field(default_factory=list)
    gaps: list[EvidenceGapDraft] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    profiles: dict[str, SourceProfile] = field(default_factory=dict)  # source key -> profile


@dataclass(frozen=True)
class SubquestionInput:
    key: str
    text: str
    passages: tuple[PassageInput, ...]
    queries: tuple[str, ...] = ()  # what was searched for it (for an evidence gap)
    priority: int = 0
    dimension: str = ""  # the plan's research dimension ("evidence", "counter-evidence", …)


@dataclass(frozen=True)
class RunInput:
    question: str
    subquestions: tuple[SubquestionInput, ...]
    scope: Scope = field(default_factory=Scope)
    profiles: dict[str, SourceProfile] = field(default_factory=dict)  # source key -> profile
    idf: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MineConfig:
    max_claims: int = 0  # most claims one subquestion may keep; 0: half the run's budget, >= 8
    max_run_claims: int = 15  # most claims a run keeps (reviewers decide every one)
    min_content_words: int = 3
    max_words: int = 70
    merge_jaccard: float = 0.85
    paraphrase_cosine: float = 0.90  # two sources' wordings of one finding merge above it
    contested_cosine: float = 0.55  # conflicting directions count as contested above it
    # relevance below this drops a candidate as off-topic (the fitted weights' floor)
    off_topic: float = field(default_factory=shipped_off_topic)
    focus: str = ""  # the subquestion text: candidates that bear on it rank first
    question: str = ""  # the plan's question (mine_claims; mine_run takes it from RunInput)

    @property
    def per_subquestion(self) -> int:
        return self.max_claims or max(8, -(-self.max_run_claims // 2))
