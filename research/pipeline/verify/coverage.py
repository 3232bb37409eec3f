"""Strict entailment by coverage: the second offline verifier family (``coverage``).

A passage supports a claim only when one quote window of it — one clause or sentence, or
two adjacent ones — states *everything* the claim says, as words:

1. every content word of the claim (stemmed; stopwords aside);
2. every number of the claim with its unit;
3. the claim's negation (both negated, or neither);
4. the claim's direction of effect ("increases" / "reduces"), after negation;
5. no antonym of a claim word where the claim has the word;
6. no hedge ("may", "suggests") in the window that the claim drops;
7. the claim's roles in the claim's order: the first content word before its relation
   verb (the subject) comes before the first one after it (the object), so "A inhibits
   B" is not supported by "B inhibits A" (a swap of roles is not the same finding; a
   passive rewording is conservatively not read as support either).

Anything less is ``insufficient`` with the first missing piece named. A claim with no
content word, or one about a year later than any the passage mentions (a forecast
beyond the source's horizon), is ``unverifiable``. The family never votes
``contradicts``: contradictions are for the rules, learned, NLI and LLM families.

Its failure mode differs from the learned verifier's on purpose. It cannot be fooled
by a passage that is merely *about* the claim (topic similarity is what embeddings
reward) and it never supports a paraphrase: it under-supports, never over-supports
on lexical grounds. So a quorum of ``learned`` + ``coverage`` PASSes a claim only
when a semantic model and a literal reading both find it stated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from research.pipeline.language.direction import RELATION_VERB, antonym_clash, negated
from research.pipeline.language.lexicon import content_words, hedges, is_meaningful_quote, stem
from research.pipeline.language.quantities import quantities, years
from research.pipeline.language.verdict_cues import FORECAST
from research.pipeline.verify.features import item_sentences, polarity
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict


@dataclass(frozen=True)
class CoverageConfig:
    max_window: int = 2  # sentences per quote window
    score: float = 0.9  # the vote's confidence when every check holds


@dataclass(frozen=True)
class Reading:
    """How well one window states the claim: the first gap, or "" when none."""

    start: int
    end: int
    missing: str
    covered: float


class CoverageVerifier:
    family = "coverage"
    name = "coverage-strict"

    def __init__(self, config: CoverageConfig | None = None) -> None:
        self.config = config or CoverageConfig()

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        return [self.judge_one(claim, item) for item in items]

    def judge_one(self, claim: ClaimInput, item: EvidenceItem) -> Vote:
        verdict, score, reading, why = self._decide(claim, item)
        quote = item.text[reading.start : reading.end] if reading else ""
        return Vote.bind(
            self.name,
            self.family,
            claim,
            item,
            verdict=verdict,
            score=score,
            quote=quote if is_meaningful_quote(quote) else "",
            rationale=why,
        )

    def _decide(
        self, claim: ClaimInput, item: EvidenceItem
    ) -> tuple[VoteVerdict, float, Reading | None, str]:
        stems = _ordered_stems(claim.text)
        if not stems:
            return VoteVerdict.UNVERIFIABLE, 1.0, None, "the claim has no content word to find"
        if _beyond_horizon(claim.text, item.text):
            return (
                VoteVerdict.UNVERIFIABLE,
                1.0,
                None,
                "the claim is about a later year than any the passage mentions",
            )
        readings = [
            read(claim.text, stems, item.text, a, b, self.config)
            for a, b in _windows(item, self.config.max_window)
        ]
        readings = [r for r in readings if is_meaningful_quote(item.text[r.start : r.end])]
        if not readings:
            return VoteVerdict.INSUFFICIENT, 1.0, None, "the passage has no quotable sentence"
        full = [r for r in readings if not r.missing]
        if full:
            best = min(full, key=lambda r: r.end - r.start)
            return (
                VoteVerdict.SUPPORTS,
                self.config.score,
                best,
                "one window states every content word, number, negation and direction "
                "of the claim, its subject before its object",
            )
        best = max(readings, key=lambda r: (r.covered, -(r.end - r.start)))
        return (
            VoteVerdict.INSUFFICIENT,
            round(1.0 - best.covered, 4),
            best,
            f"not stated in any one window: {best.missing}",
        )


def _ordered_stems(text: str) -> list[str]:
    seen: list[str] = []
    for word in content_words(text):
        s = stem(word)
        if s not in seen:
            seen.append(s)
    return seen


def _beyond_horizon(claim: str, passage: str) -> bool:
    claimed, stated = years(claim), years(passage)
    return bool(claimed and FORECAST.search(claim.lower()) and max(claimed) > max(stated or [0]))


def _windows(item: EvidenceItem, size: int) -> list[tuple[int, int]]:
    """Runs of 1..size adjacent clauses ("P, but Q" is two: a claim mined from P is not
    denied by the negation that belongs to Q)."""
    spans = item_sentences(item)
    out = []
    for i in range(len(spans)):
        for j in range(i, min(i + size, len(spans))):
            out.append((spans[i][0], spans[j][1]))
    return out


def read(
    claim: str, stems: list[str], passage: str, start: int, end: int, cfg: CoverageConfig
) -> Reading:
    """The first thing window ``passage[start:end]`` fails to state, in the order above."""
    window = passage[start:end]
    positions = _positions(window)
    found = [s for s in stems if s in positions]
    covered = len(found) / len(stems)
    missing = [w for w in content_words(claim) if stem(w) not in positions]
    if missing:
        shown = ", ".join(dict.fromkeys(missing[:4]))
        return Reading(start, end, f"the words {shown!r} are missing", covered)
    gap = _statement_gap(claim, window, stems, positions, cfg)
    return Reading(start, end, gap, covered if not gap else covered - 0.01)


def _statement_gap(
    claim: str, window: str, stems: list[str], positions: dict[str, int], cfg: CoverageConfig
) -> str:
    for q in quantities(claim):
        if not any(
            q.value == f.value and (q.unit == f.unit or not q.unit) for f in quantities(window)
        ):
            return f"the number {q.text!r} is not stated with its unit"
    if negated(claim) != negated(window):
        return "the negation differs" if negated(window) else "the claim's negation is not stated"
    if polarity(claim) != 0 and polarity(claim) != polarity(window):
        return "the direction of the effect is not the claim's"
    clash = antonym_clash(claim, window)
    if clash:
        return f"the passage says {clash[0][1]!r} where the claim says {clash[0][0]!r}"
    hedged = sorted(set(hedges(window)) - set(hedges(claim)))
    if hedged:
        return f"the passage is hedged ({', '.join(hedged)}), the claim is not"
    if _roles_swapped(claim, positions):
        return "the subject and the object of the claim are the other way round"
    return ""


def _positions(text: str) -> dict[str, int]:
    """First position of each content stem in the text."""
    out: dict[str, int] = {}
    for i, word in enumerate(content_words(text)):
        out.setdefault(stem(word), i)
    return out


def _roles_swapped(claim: str, positions: dict[str, int]) -> bool:
    """The claim's subject head comes after its object head in the window."""
    match = RELATION_VERB.search(claim)
    if match is None:
        return False
    subject = _ordered_stems(claim[: match.start()])
    obj = [s for s in _ordered_stems(claim[match.end() :]) if s not in subject]
    if not subject or not obj:
        return False
    return positions.get(subject[0], -1) > positions.get(obj[0], -1)
