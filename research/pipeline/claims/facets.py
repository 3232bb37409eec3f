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

from research.pipeline.effect import EFFECT_VERBS
from research.pipeline.text import DOWN_WORDS, NULL_EFFECT, UP_WORDS


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

_ASSOCIATION = re.compile(
    r"\b(?:(?:was|were|is|are|be|been|being) )?(?:not |inversely |positively |negatively |"
    r"independently |significantly |strongly |weakly )*(?:associated|correlated|linked) "
    r"(?:with|to)\b|\bpredict(?:s|ed)?\b",
    re.I,
)
_NOT_ASSOCIATED = re.compile(
    r"\b(?:not|no|nor|neither)\s+(?:\w+\s+)?(?:associat|correlat|linked|related|predict)", re.I
)
# A negated verb, what is denied in the word after it: "did not reduce", "could not be
# reached", "is not soluble in", "no longer supports". Whether it is an effect denied
# or a property is the word's business (``effect_word``).
_NEGATION = re.compile(
    r"\b(?:(?:did|does|do|could|can|may|might|would|will|was|were|is|are|has|have|had)"
    r"\s+not|never|no longer)\s+(?:(?:significantly|substantially|materially|be|been|"
    r"further)\s+)*(?P<verb>[^\W\d_][\w-]*)",
    re.I,
)
# A stated null result: "had no significant effect on", "there was no difference in".
_NULL_PHRASE = re.compile(
    r"\b(?:had|has|have|showed|shows|there (?:was|were|is|are))\s+no\s+(?:significant\s+|"
    r"statistically significant\s+|clear\s+|measurable\s+)?(?:effect|influence|impact|"
    r"difference|change|association|benefit)\s+(?:on|in|of|with|between)?",
    re.I,
)
_STOP = re.compile(
    r"\s+(?:by|compared|relative|than|versus|vs\.?|among|in (?:a|an)\b|in (?:the )?(?:\d|patients|"
    r"women|men|adults|children|participants|subjects|people|persons|mice|rats)|"
    r"at|over|during|after|within|from|when|while|whereas|although|but|"
    r"(?:p|P)\s*[<=>])\b|\s*[,;:(\[]"
)
_POPULATION = re.compile(
    r"\b(?:in|among|of|for)\s+(?P<who>(?:(?:a|an|the|\d[\d,]*|all|healthy|older|younger|"
    r"elderly|young|adult|pregnant|obese|male|female|white|black|[a-z]+-[a-z]+|[A-Z][a-z]+)"
    r"\s+){0,5}(?:patients|"
    r"women|men|adults|children|infants|adolescents|participants|subjects|people|persons|"
    r"individuals|residents|volunteers|mice|rats|animals|cells|users|firms|households|"
    r"companies|students|workers|countries)(?:\s+(?:with|aged|over|older than|who)\s+"
    r"[^,;.()]{1,60})?)",
    re.I,
)
# "In a randomized trial of 3,270 women, X reduced Y": the lead-in is not the intervention.
_LEAD = re.compile(
    r"^(?:(?:in|among|for|from|across|after|during|over|using|with) (?:[^,]|,(?=\d)){3,160},\s*)+",
    re.I,
)
# A confidence interval stays with the figure it qualifies: "odds ratio 0.88, 95% confidence
# interval 0.81 to 0.96" is one effect, and its "95%" is not a second one.
_INTERVAL = (
    r"(?:[,;]?\s*(?:90|95|99)\s*%\s*(?:confidence interval|CI)[,:\s]*"
    r"-?\d+(?:\.\d+)?\s*(?:to|-|–)\s*-?\d+(?:\.\d+)?)?"
)
_EFFECT = re.compile(
    r"(?:\bby\s+)?\d+(?:\.\d+)?\s*(?:%|percent\b|per cent\b)"
    r"(?!\s*(?:confidence|credible|CI\b))(?:\s*\([^)]{0,80}\))?|"
    r"\b(?:OR|RR|HR|IRR|odds ratio|hazard ratio|relative risk|risk ratio|rate ratio)"
    r"[,:=\s]*(?:(?:of|was|were|is)\s+)?\d+(?:\.\d+)?(?:\s*[\(\[][^)\]]{0,80}[\)\]])?"
    + _INTERVAL
    + "|"
    r"\b[Pp]\s*[<=≤]\s*0?\.\d+|\b\d+(?:\.\d+)?[- ]fold\b",
)


def stated_null(text: str) -> bool:
    """Whether the text states a null result. "No longer" (in text.NULL_EFFECT for the
    verifiers' conflict cues) is a change of state, not a null result: "X no longer
    supports Y" estimates no effect."""
    return bool(_NULL_PHRASE.search(text)) or any(
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
    negation = _NEGATION.search(text)
    if stated_null(text) or (negation is not None and effect_word(negation["verb"])):
        assoc = _ASSOCIATION.search(text)
        return NOT_ASSOCIATED if assoc and "not" in assoc.group(0).lower() else NO_EFFECT
    if negation is not None:
        # A property denied ("is not soluble in water"): no direction, unless an association
        # is what the sentence denies.
        return NOT_ASSOCIATED if _NOT_ASSOCIATED.search(text) else ""
    words = re.findall(r"[a-z]+", text.lower())
    up = sum(w in UP_WORDS for w in words)
    down = sum(w in DOWN_WORDS for w in words)
    if up != down:
        return INCREASES if up > down else DECREASES
    if _ASSOCIATION.search(text):
        return NOT_ASSOCIATED if _NOT_ASSOCIATED.search(text) else ASSOCIATED
    return ""


def _effect_phrase(text: str) -> re.Match[str] | None:
    negation = _NEGATION.search(text)
    if negation is not None and not effect_word(negation["verb"]):
        if not stated_null(text) and not _ASSOCIATION.search(text):
            return None  # a property denied ("is not soluble in"): no effect split
        negation = None  # "did not differ": the null phrase or the association splits
    phrases = [m for m in (negation, _NULL_PHRASE.search(text), _ASSOCIATION.search(text)) if m]
    if phrases:
        return min(phrases, key=lambda m: m.start())
    candidates: list[re.Match[str]] = []
    verbs = re.finditer(r"\b[a-z]+\b", text)
    for m in verbs:
        word = m.group(0)
        if (
            m.start() > 0
            and (word in UP_WORDS or word in DOWN_WORDS)
            and word
            not in (
                "higher",
                "lower",
                "greater",
                "more",
                "less",
                "fewer",
                "loss",
                "gain",
                "gains",
            )
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
        head = _LEAD.sub("", text[: phrase.start()])
        intervention = _trim(head, 160)
        rest = text[phrase.end() :]
        stop = _STOP.search(rest)
        outcome = _trim(rest[: stop.start()] if stop else rest)
    who = _POPULATION.search(text)
    effects = [m.group(0).strip() for m in _EFFECT.finditer(text)]
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
