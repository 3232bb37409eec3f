"""The grammar of effect questions: what X is asked to do to what Y, in whom.

One reader for both consumers: the offline planner (:mod:`research.pipeline.planner`)
builds its subquestions and queries from it, and outcome-aware relevance
(:mod:`research.pipeline.claims.outcome`) checks candidates against the same outcome.

:func:`parse_effect` reads, in any domain:

* "Does X reduce / increase / affect / improve / prevent Y [in Z]?", "How does X affect Y?",
  "Through what mechanism could X affect Y?" (an auxiliary that opens the question or
  follows its wh-word), "…about whether X reduces Y", "…the claim that X reduces Y";
* "Is X associated with / linked to / related to Y?";
* "the effect (impact, influence, benefit, harm, role) of X on Y".

A word of X that looks like a verb stays in X when another effect verb follows it: "Do
minimum wage increases reduce teen employment?" is X "minimum wage increases", Y "teen
employment". A statement ("X is associated with Y") is not read, nor a phrase whose X holds
a finite verb. Y is cut at its comparator ("compared with JavaScript", "versus placebo")
and at its population ("in older adults", "among teenagers").

The verbs, markers and clause patterns read here are
:mod:`research.pipeline.language.effects`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from research.pipeline.language.effects import (
    COMPARATOR_MARKERS,
    EFFECT_CLAUSES,
    EFFECT_VERBS,
    FINITE_VERBS,
    LEADING_EFFECT_VERB,
    NOMINAL_EFFECT,
    NOMINAL_VERBS,
    POPULATION_MARKERS,
)
from research.pipeline.language.lexicon import FOR_COMPLEMENT_NOUNS


@dataclass(frozen=True)
class Effect:
    """X's asked effect on Y in Z, as written (the population cut off Y)."""

    exposure: str  # X: "minimum wage increases"
    verb: str  # lower case, as written: "reduce", "associated with"; "on" for "effect of X on Y"
    outcome: str  # Y without its population: "the rate of defaults or evictions"
    population: str = ""  # Z: "older adults"
    comparator: str = ""  # what X is compared with: "JavaScript", "placebo"
    aux: str = ""  # the question's auxiliary, lower case ("do", "does", "can"); '' when none

    @property
    def base_verb(self) -> str:
        """The verb's bare form (:func:`base_verb`)."""
        return base_verb(self.verb)


def base_verb(verb: str) -> str:
    """An effect verb's bare form: "reduces" → "reduce", "leads to" → "lead to", "on" (of "the
    effect of X on Y") → "affect", "be associated with" → "associated with"."""
    verb = verb.lower()
    if verb in NOMINAL_VERBS:
        return NOMINAL_VERBS[verb]
    if verb.startswith("be "):
        return verb[3:]
    head, _, tail = verb.partition(" ")
    bare = " ".join([head[:-1], tail]).strip() if head.endswith("s") else verb
    return bare if bare in EFFECT_VERBS else verb


def parse_effect(text: str) -> Effect | None:
    """X, the verb, Y and Z of an effect-shaped question or clause; None for other shapes."""
    stripped = " ".join(text.split()).rstrip(" ?.!")
    for pattern in (NOMINAL_EFFECT, *EFFECT_CLAUSES):
        match = pattern.search(stripped)
        if match and not FINITE_VERBS & set(match["x"].lower().split()):
            exposure, verb, rest = _shift(match["x"].strip(), match["verb"], match["y"])
            rest, comparator = split_comparator(rest)
            outcome, population = split_population(rest)
            if exposure and outcome:
                aux = (match.groupdict().get("aux") or "").lower()
                return Effect(exposure, verb.lower(), outcome, population, comparator, aux)
            return None
    return None


def _shift(x: str, verb: str, y: str) -> tuple[str, str, str]:
    """X, verb and Y, where a first "verb" followed by another was a noun of X: "Do minimum
    wage increases reduce teen employment" is X "minimum wage increases", Y "teen
    employment"."""
    while (more := LEADING_EFFECT_VERB.match(y.strip())) is not None:
        x, verb, y = f"{x} {verb}", more["verb"], more["y"]
    return x, verb, y


def split_comparator(phrase: str) -> tuple[str, str]:
    """The phrase without its comparator clause, and the comparator: "runtime errors
    compared with JavaScript in large codebases" → ("runtime errors in large codebases",
    "JavaScript")."""
    at, marker = _first(phrase, COMPARATOR_MARKERS)
    if not marker:
        return phrase, ""
    tail = phrase[at + len(marker) :]
    end, _ = _first(tail, POPULATION_MARKERS)
    comparator = tail[:end].strip(" ,.")
    return " ".join(f"{phrase[:at]} {tail[end:]}".split()).strip(" ,."), comparator


def _first(phrase: str, markers: tuple[str, ...]) -> tuple[int, str]:
    """Where the first of ``markers`` starts in ``phrase`` (not at 0), and which; (len, "").
    A " for " after a noun of :data:`FOR_COMPLEMENT_NOUNS` is part of the phrase."""
    cut, found = len(phrase), ""
    for marker in markers:
        at = phrase.find(marker)
        while marker == " for " and at > 0 and _for_complement(phrase[:at]):
            at = phrase.find(marker, at + 1)
        if 0 < at < cut:
            cut, found = at, marker
    return cut, found


def _for_complement(before: str) -> bool:
    words = before.split()
    return bool(words) and words[-1].lower().strip(",") in FOR_COMPLEMENT_NOUNS


def split_population(phrase: str) -> tuple[str, str]:
    """The outcome and its population, cut at the first population marker."""
    at, marker = _first(phrase, POPULATION_MARKERS)
    return phrase[:at].strip(" ,."), phrase[at + len(marker) :].strip(" ,.")
