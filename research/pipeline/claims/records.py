"""Typed records of claim mining: passages in, claim drafts and dropped candidates out.

Offsets in :class:`Anchor` are relative to the passage text; ``snapshot_start`` maps
them into the snapshot text, where the ledger service checks them again before saving.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    score: float = 0.0

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


@dataclass
class MiningResult:
    claims: list[ClaimDraft]
    dropped: list[DroppedCandidate] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MineConfig:
    max_claims: int = 25  # per call (a subquestion's evidence)
    min_content_words: int = 3
    max_words: int = 70
    merge_jaccard: float = 0.85
    focus: str = ""  # the subquestion text: candidates that bear on it rank first
