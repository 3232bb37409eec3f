"""What a question asks an effect *on*, and whether a candidate finding names it.

A finding can name a question's intervention or exposure and still not answer it: "a
minimum wage … lower rates of teen smoking" says nothing about employment or hours. This
module reads the question (and each subquestion) into its exposure and its **outcomes**,
and tells whether a sentence names one of them.

:func:`parse_aim` reads effect-shaped *questions* in any domain with the grammar the
offline planner reads them with (:func:`research.pipeline.effect.parse_effect`: "Does X
reduce Y [in Z]?", "How does X affect Y?", "…whether X reduces Y", "Is X associated with
Y?", "the effect of X on Y"; a statement is not read). Y is cut at its population ("in
older adults", "among teenagers"), split into alternatives
("employment or hours" → employment, hours; "cognitive decline and dementia"), and stripped of
measure words ("the risk of", "incidence", "rates": :data:`text.MEASURE_WORDS`).

:func:`outcome_focus` decides what a subquestion's candidates must name: the question's
outcomes when the subquestion names one of them or wraps the question's words, *required*;
the subquestion's own outcome when it asks about another one ("Does X reduce mortality?"
keeps mortality); the question's, *not required*, when the subquestion asks about the
exposure itself ("Which doses of X were studied?") — there only a finding that reports
another outcome (:func:`other_outcome`: "the incidence of colorectal cancer", "… associated
with reduced mortality") is off-outcome.

:func:`match_outcomes` says whether (and how) a sentence or its source's title names an
outcome: a word with the outcome's stem ("employed", "hourly"), at least half the
alternative's terms by idf weight, the title when the sentence reports no other outcome, or
a word whose embedding is within :data:`OUTCOME_COSINE` of the alternative or its head noun
("jobs" for "employment"; words of the exposure and direction verbs such as "fell" never
count). Pure: the caller passes the encoder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from research.pipeline.claims.facets import facets
from research.pipeline.effect import parse_effect
from research.pipeline.language.cues import (
    LEADING_DETERMINER,
    MEASURE_OF_PHRASE,
    NOT_OUTCOME_WORDS,
    OUTCOME_ALTERNATIVES_SPLIT,
    OUTCOME_STOPWORDS,
    RELATION_NOUNS,
)
from research.pipeline.language.lexicon import (
    MEASURE_WORDS,
    PEOPLE_NOUNS,
    STOPWORDS,
    content_words,
    stem,
)

Encode = Callable[[list[str]], NDArray[np.float32]]
# A word this close (cosine) to an outcome or its head noun names it in other words. Set by
# reading word pairs of three domains with the shipped all-MiniLM-L6-v2: delay ≈ latency
# 0.65, jobs ≈ employment 0.78 are in; survival ≈ mortality 0.60 is out; workers ≈
# employment 0.64 is a known lenient match (the clinical run's record in docs/bench/).
OUTCOME_COSINE = 0.62


@dataclass(frozen=True)
class Aim:
    """What an effect-shaped question asks: X's effect on Y (its alternatives)."""

    exposure: str
    outcome: str  # as written, without the population ("the rate of defaults or evictions")
    outcomes: tuple[str, ...]  # the alternatives, measure words stripped ("defaults", "evictions")


@dataclass(frozen=True)
class OutcomeFocus:
    """What a subquestion's candidates are checked against."""

    outcomes: tuple[str, ...]
    required: bool  # False: the subquestion asks about the exposure itself (doses, forms)
    source: str  # "subquestion" or "question": whose outcome it is
    exposure: str = ""  # its words never count as naming the outcome ("wage" ≈ "employment")

    @property
    def label(self) -> str:
        return " or ".join(self.outcomes)


@dataclass(frozen=True)
class OutcomeMatch:
    """How a candidate names an outcome ('' in ``how`` when it does not)."""

    named: bool
    how: str = ""  # "defaults", "title: evictions", "jobs ≈ employment (0.71)"
    other: str = ""  # another outcome it reports a measure of ("colorectal cancer")


def parse_aim(text: str) -> Aim | None:
    """X and the outcomes Y of an effect-shaped question or sentence; None for other shapes
    (:func:`research.pipeline.effect.parse_effect` reads it, as the planner does)."""
    effect = parse_effect(text)
    if effect is None:
        return None
    outcomes = alternatives(effect.outcome)
    return Aim(effect.exposure, effect.outcome, outcomes) if outcomes else None


def alternatives(outcome: str) -> tuple[str, ...]:
    """The outcome's alternatives without articles and measure words: "the rate of defaults
    or evictions" → ("defaults", "evictions"); "default risk" → ("default",)."""
    text = re.sub(r"\b(?:the\s+)?(?:\w+\s+)?(?:of|for)\s+developing\s+", "", outcome, flags=re.I)
    out: list[str] = []
    for part in OUTCOME_ALTERNATIVES_SPLIT.split(text):
        words = LEADING_DETERMINER.sub("", part.strip(" ,.")).split()
        while words and (words[0].lower() in MEASURE_WORDS or words[0].lower() in STOPWORDS):
            words = words[1:]
            if words and words[0].lower() in ("of", "for"):
                words = words[1:]
        while words and (words[-1].lower() in MEASURE_WORDS or words[-1].lower() in STOPWORDS):
            words = words[:-1]
        phrase = " ".join(words)
        if content_words(phrase) and phrase.lower() not in (o.lower() for o in out):
            out.append(phrase)
    return tuple(out)


def outcome_focus(question: str, subquestion: str) -> OutcomeFocus | None:
    """The outcomes a subquestion's candidates must name (None: the question asks none)."""
    asked = parse_aim(question)
    sub_stems = _stems(subquestion)
    # One of the question's outcomes named: the subquestion asks about it ("Has the evidence
    # on X and Y changed?"), whatever else its words say.
    named = asked is not None and any(_stems(alt) <= sub_stems for alt in asked.outcomes)
    core = " ".join(question.split()).rstrip(" ?.!").lower()
    # A subquestion that wraps the question's own words ("How does <question> work?") asks
    # what the question asks; one in its own words may name its own outcome.
    wraps = bool(core) and core in " ".join(subquestion.split()).lower()
    own = parse_aim(subquestion) if subquestion and not wraps and not named else None
    if own is not None:
        return OutcomeFocus(own.outcomes, True, "subquestion", own.exposure)
    if asked is None:
        return None
    return OutcomeFocus(asked.outcomes, named or not subquestion, "question", asked.exposure)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text) if w not in OUTCOME_STOPWORDS}


def _head(phrase: str) -> str:
    """The phrase's head noun: its last content word ("loan default" → "default")."""
    words = [w for w in content_words(phrase) if w not in OUTCOME_STOPWORDS]
    return words[-1] if words else ""


def _lexical(alt: str, stems: set[str], idf: dict[str, float]) -> bool:
    """The alternative's head stem, or at least half its terms by idf weight, are there."""
    needed = _stems(alt)
    if not needed:
        return False
    head = _head(alt)
    if head and stem(head) in stems:
        return True
    total = sum(idf.get(t, 6.0) for t in needed)
    return sum(idf.get(t, 6.0) for t in needed & stems) >= 0.5 * total


def reported_measure(text: str) -> str:
    """The first thing a sentence reports a measure of ("lower incidence of colorectal cancer"
    → "colorectal cancer"), '' when it names none."""
    match = MEASURE_OF_PHRASE.search(text)
    return match["what"].strip() if match else ""


def other_outcome(text: str, alts: tuple[str, ...], exposure: set[str]) -> str:
    """Another outcome the sentence reports instead of the ones asked: what it reports a
    measure of ("the risk of colorectal cancer"), else what its effect phrase acts on
    ("… was associated with reduced mortality"); never the exposure itself ("levels of
    serum ferritin", "an increase in the recommended intake of iron"), a number or one of
    ``alts``. '' when there is none."""
    found = [m["what"] for m in MEASURE_OF_PHRASE.finditer(text)] + [facets(text).outcome]
    for phrase in found:
        words = [
            w
            for w in content_words(phrase)
            if w not in NOT_OUTCOME_WORDS
            and w not in RELATION_NOUNS
            and w.lower() not in PEOPLE_NOUNS
            and w.isalpha()
            and not w.endswith("ly")
        ]
        stems = {stem(w) for w in words}
        if not words or stems & exposure or any(_lexical(a, stems, {}) for a in alts):
            continue
        return " ".join(words)
    return ""


def candidate_words(text: str, exposure: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The words of a sentence that could name an outcome (no function, direction or
    measure words, no numbers, none of the exposure's words)."""
    return [
        w
        for w in content_words(text)
        if w not in NOT_OUTCOME_WORDS and w.isalpha() and stem(w) not in exposure
    ]


def match_outcomes(
    texts: Sequence[tuple[str, str]],
    focus: OutcomeFocus,
    idf: dict[str, float],
    encode: Encode | None,
) -> list[OutcomeMatch]:
    """For each (sentence, title): does it name one of the focus's outcomes, and how."""
    alts = focus.outcomes
    heads = [_head(a) for a in alts]
    found: list[OutcomeMatch | None] = []
    exposure = _stems(focus.exposure) - {s for a in alts for s in _stems(a)}
    for sentence, title in texts:
        found.append(_lexical_match(sentence, title, alts, idf, exposure))
    pending = [i for i, m in enumerate(found) if m is None]
    near = _near_words(
        [candidate_words(texts[i][0], exposure) for i in pending],
        [candidate_words(texts[i][1], exposure) for i in pending],
        alts,
        heads,
        encode,
    )
    out: list[OutcomeMatch] = []
    by_pending = dict(zip(pending, near, strict=True))
    for i, match in enumerate(found):
        if match is not None:
            out.append(match)
            continue
        how = by_pending[i]
        other = other_outcome(texts[i][0], alts, exposure)
        if how and not (how.startswith("title:") and other):
            out.append(OutcomeMatch(True, how))
        else:
            out.append(OutcomeMatch(False, "", other))
    return out


def _lexical_match(
    sentence: str, title: str, alts: tuple[str, ...], idf: dict[str, float], exposure: set[str]
) -> OutcomeMatch | None:
    stems, title_stems = _stems(sentence), _stems(title)
    for alt in alts:
        if _lexical(alt, stems, idf):
            return OutcomeMatch(True, alt)
    other = other_outcome(sentence, alts, exposure)
    for alt in alts:
        if _lexical(alt, title_stems, idf) and not other:
            return OutcomeMatch(True, f"title: {alt}")
    return None


def _near_words(
    sentences: list[list[str]],
    titles: list[list[str]],
    alts: tuple[str, ...],
    heads: list[str],
    encode: Encode | None,
) -> list[str]:
    """For each sentence: '<word> ≈ <outcome> (cosine)' for its nearest word within
    OUTCOME_COSINE of an outcome (or, prefixed 'title: ', a word of its title); '' if none."""
    if encode is None or not sentences:
        return [""] * len(sentences)
    targets = list(dict.fromkeys([*alts, *(h for h in heads if h)]))
    vocab = sorted({w for ws in [*sentences, *titles] for w in ws})
    if not vocab:
        return [""] * len(sentences)
    vectors = encode([*targets, *vocab])
    sims = vectors[len(targets) :] @ vectors[: len(targets)].T  # word x target
    best = {w: (float(sims[i].max()), targets[int(sims[i].argmax())]) for i, w in enumerate(vocab)}

    def nearest(ws: list[str]) -> tuple[float, str, str]:
        scored = [(best[w][0], w, best[w][1]) for w in ws]
        return max(scored, default=(0.0, "", ""))

    out = []
    for ws, ts in zip(sentences, titles, strict=True):
        score, word, target = nearest(ws)
        if score >= OUTCOME_COSINE:
            out.append(f"{word} ≈ {_alt_of(target, alts)} ({score:.2f})")
            continue
        score, word, target = nearest(ts)
        out.append(
            f"title: {word} ≈ {_alt_of(target, alts)} ({score:.2f})"
            if score >= OUTCOME_COSINE
            else ""
        )
    return out


def _alt_of(target: str, alts: tuple[str, ...]) -> str:
    """The alternative a matched target (an alternative or its head noun) belongs to."""
    return next((a for a in alts if a == target or _head(a) == target), target)
