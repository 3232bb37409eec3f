"""A finding's parts as it states them: population, intervention, outcome, direction, effect.

:func:`facets` splits a claim at its effect phrase ("reduced", "was associated with", "did
not affect"): what comes before is the intervention or exposure, what follows (up to a
qualifier such as "by 41%", "compared with", "in older women") is the outcome. The
population is who the claim names ("in 3,270 older women"), else who its source studied.
The direction is one of ``increases``, ``decreases``, ``no effect``, ``associated``, ``not
associated``; the effect is the figures as stated (percentages, ratios with their
intervals, p values). Parts the claim does not state stay empty: nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
# "could not be reached" reports a shortfall, not a null effect: after "not be" only a
# participle of effect or evidence ("not be explained by", "not be shown to") counts.
_NOT_BE_EFFECT = (
    r"(?!be\s+(?!(?:affected|altered|changed|reduced|increased|decreased|improved|"
    r"influenced|modified|associated|linked|related|detected|observed|shown|demonstrated|"
    r"found|confirmed|explained|attributed|replicated|distinguished)\b)\w+)"
)
_NEGATED_VERB = re.compile(
    r"\b(?:did|does|do|could|can|may|might|would|will|was|were|is|are)\s+not\s+"
    r"(?:significantly\s+|substantially\s+|materially\s+)?" + _NOT_BE_EFFECT + r"(?P<verb>\w+)|"
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
    r"elderly|young|adult|postmenopausal|pregnant|community-dwelling|frail|obese|"
    r"institutionali[sz]ed|male|female|white|black|[A-Z][a-z]+)\s+){0,5}(?:patients|"
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


def direction_of(text: str) -> str:
    if _NEGATED_VERB.search(text) or NULL_EFFECT.search(text):
        assoc = _ASSOCIATION.search(text)
        return NOT_ASSOCIATED if assoc and "not" in assoc.group(0).lower() else NO_EFFECT
    words = re.findall(r"[a-z]+", text.lower())
    up = sum(w in UP_WORDS for w in words)
    down = sum(w in DOWN_WORDS for w in words)
    if up != down:
        return INCREASES if up > down else DECREASES
    if _ASSOCIATION.search(text):
        return NOT_ASSOCIATED if _NOT_ASSOCIATED.search(text) else ASSOCIATED
    return ""


def _effect_phrase(text: str) -> re.Match[str] | None:
    phrases = [m for m in (_NEGATED_VERB.search(text), _ASSOCIATION.search(text)) if m]
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
