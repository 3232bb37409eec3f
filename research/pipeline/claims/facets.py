"""A finding's parts as it states them: population, intervention, outcome, direction, effect.

:func:`facets` splits a claim at its effect phrase ("reduced", "was associated with", "did
not affect"): what comes before is the intervention or exposure, what follows (up to a
qualifier such as "by 41%", "compared with", "in older women") is the outcome. The
population is who the claim names ("in 3,270 older women"), else who its source studied.
The direction is one of ``increases``, ``decreases``, ``no effect``, ``associated``, ``not
associated``; the effect is the figures as stated (percentages, ratios with their
intervals, p values). Parts the claim does not state stay empty: nothing is guessed.

"No effect" is a null result the finding states: "had no significant effect on", "did not
differ", or an effect it reports absent ("did not reduce", "did not affect"). A negated
property is none: "is not soluble in water", "no longer supports", "could not be
reached" estimate no effect, so their direction, intervention and outcome stay empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research.pipeline.language.cues import (
    ASSOCIATION_PHRASE,
    EFFECT_FIGURE,
    NEGATED_ASSOCIATION,
    NEGATED_VERB,
    NON_VERB_DIRECTION_WORDS,
    NULL_RESULT_PHRASE,
    OUTCOME_END,
    POPULATION_PHRASE,
    STUDY_LEAD_IN,
)
from research.pipeline.language.direction import DOWN_WORDS, NULL_EFFECT, UP_WORDS
from research.pipeline.language.effects import EFFECT_VERBS


@dataclass(frozen=True)
class Facets:
    """What a finding says, where it says it: who, what, on what, which way, how much."""

    population: str = ""
    intervention: str = ""  # the intervention or exposure (the finding's subject)
    outcome: str = ""
    direction: str = ""  # increases, decreases, no effect, associated, not associated
    effect: str = ""  # the effect size as stated ("41% (95% CI, 18%-58%)")
    year: int | None = None


INCREASES = "increases"
DECREASES = "decreases"
NO_EFFECT = "no effect"
ASSOCIATED = "associated"
NOT_ASSOCIATED = "not associated"
# Directions that contradict each other when two findings are about the same thing.
CONFLICTS = frozenset(
    {
        frozenset({INCREASES, DECREASES}),
        frozenset({INCREASES, NO_EFFECT}),
        frozenset({DECREASES, NO_EFFECT}),
        frozenset({ASSOCIATED, NOT_ASSOCIATED}),
        frozenset({INCREASES, NOT_ASSOCIATED}),
        frozenset({DECREASES, NOT_ASSOCIATED}),
        frozenset({ASSOCIATED, NO_EFFECT}),
    }
)


def stated_null(text: str) -> bool:
    """Whether the text states a null result. "No longer" (in text.NULL_EFFECT for the
    verifiers' conflict cues) is a change of state, not a null result: "X no longer
    supports Y" estimates no effect."""
    return bool(NULL_RESULT_PHRASE.search(text)) or any(
        m.group(0).lower() != "no longer" for m in NULL_EFFECT.finditer(text)
    )


def effect_word(word: str) -> bool:
    """A verb of effect or direction in any form: "reduce", "reduced", "affects",
    "altered" (the direction lexicon and the effect verbs of research.pipeline.effect)."""
    word = word.lower()
    if word in UP_WORDS or word in DOWN_WORDS or word in EFFECT_VERBS:
        return True
    stems = {word[:-1], word[:-2]} if word.endswith("ed") else set()
    return bool(stems & EFFECT_VERBS)


def direction_of(text: str) -> str:
    """Which way the finding goes, as stated; "" when it states none (see the module)."""
    negation = NEGATED_VERB.search(text)
    if stated_null(text) or (negation is not None and effect_word(negation["verb"])):
        assoc = ASSOCIATION_PHRASE.search(text)
        return NOT_ASSOCIATED if assoc and "not" in assoc.group(0).lower() else NO_EFFECT
    if negation is not None:
        # A property denied ("is not soluble in water"): no direction, unless an association
        # is what the sentence denies.
        return NOT_ASSOCIATED if NEGATED_ASSOCIATION.search(text) else ""
    words = re.findall(r"[a-z]+", text.lower())
    up = sum(w in UP_WORDS for w in words)
    down = sum(w in DOWN_WORDS for w in words)
    if up != down:
        return INCREASES if up > down else DECREASES
    if ASSOCIATION_PHRASE.search(text):
        return NOT_ASSOCIATED if NEGATED_ASSOCIATION.search(text) else ASSOCIATED
    return ""


def _effect_phrase(text: str) -> re.Match[str] | None:
    negation = NEGATED_VERB.search(text)
    if negation is not None and not effect_word(negation["verb"]):
        if not stated_null(text) and not ASSOCIATION_PHRASE.search(text):
            return None  # a property denied ("is not soluble in"): no effect split
        negation = None  # "did not differ": the null phrase or the association splits
    phrases = [
        m for m in (negation, NULL_RESULT_PHRASE.search(text), ASSOCIATION_PHRASE.search(text)) if m
    ]
    if phrases:
        return min(phrases, key=lambda m: m.start())
    candidates: list[re.Match[str]] = []
    verbs = re.finditer(r"\b[a-z]+\b", text)
    for m in verbs:
        word = m.group(0)
        if (
            m.start() > 0
            and (word in UP_WORDS or word in DOWN_WORDS)
            and word not in NON_VERB_DIRECTION_WORDS
        ):
            candidates.append(m)
            break
    return min(candidates, key=lambda m: m.start()) if candidates else None


def _trim(phrase: str, limit: int = 120) -> str:
    phrase = " ".join(phrase.split()).strip(" ,;:.")
    return phrase[:limit].rsplit(" ", 1)[0] if len(phrase) > limit else phrase


def facets(text: str, source_population: str = "", year: int | None = None) -> Facets:
    """The parts of one finding; ``source_population`` fills in who when the claim is silent."""
    phrase = _effect_phrase(text)
    intervention = outcome = ""
    if phrase is not None:
        head = STUDY_LEAD_IN.sub("", text[: phrase.start()])
        intervention = _trim(head, 160)
        rest = text[phrase.end() :]
        stop = OUTCOME_END.search(rest)
        outcome = _trim(rest[: stop.start()] if stop else rest)
    who = POPULATION_PHRASE.search(text)
    effects = [m.group(0).strip() for m in EFFECT_FIGURE.finditer(text)]
    return Facets(
        population=_trim(who.group("who")) if who else _trim(source_population),
        intervention=intervention if len(intervention.split()) <= 20 else "",
        outcome=outcome,
        direction=direction_of(text),
        effect=_trim("; ".join(dict.fromkeys(effects)), 160),
        year=year,
    )


def conflicting(a: str, b: str) -> bool:
    return bool(a and b and a != b and frozenset({a, b}) in CONFLICTS)
