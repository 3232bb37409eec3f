"""Claim type, entities, numbers, hedges and time sensitivity, by deterministic rules.

The first matching type wins, in order of how demanding its evidence requirement is
(seeds/000: numerical needs an exact number and unit, current-state a recent source,
comparative evidence for both sides, causal more than correlation, ...).
"""

from __future__ import annotations

import re

from research.pipeline.language.cues import (
    CAUSAL_CUE,
    COMPARATIVE_CUE,
    CURRENT_STATE_CUE,
    DEFINITIONAL_CUE,
    FAST_CHANGING_CUE,
    HISTORICAL_CUE,
    MECHANISTIC_CUE,
    NAME_CONNECTORS,
    RECOMMENDATION_CUE,
    SENTENCE_STARTERS,
    TEMPORAL_CUE,
)
from research.pipeline.language.lexicon import hedges
from research.pipeline.language.quantities import quantities, years

_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("recommendation", RECOMMENDATION_CUE),
    ("current-state", CURRENT_STATE_CUE),
    ("comparative", COMPARATIVE_CUE),
    ("causal", CAUSAL_CUE),
    ("historical", HISTORICAL_CUE),
    ("temporal", TEMPORAL_CUE),
    ("definitional", DEFINITIONAL_CUE),
    ("mechanistic", MECHANISTIC_CUE),
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-/']*")


def _is_name(token: str) -> bool:
    """Capitalized, an acronym, mixed case (GitHub, mRNA) or a gene-like id (IL-18)."""
    return (
        token[0].isupper()
        or any(c.isupper() for c in token[1:])
        or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
    )


def _is_plain_capital(token: str) -> bool:
    return token[0].isupper() and token[1:].islower() and token.isalpha()


def claim_type(text: str) -> str:
    if quantities(text):
        # A number with a unit makes the claim numerical unless a stronger kind applies.
        for kind, pattern in _TYPE_RULES[:2]:
            if pattern.search(text):
                return kind
        return "numerical"
    for kind, pattern in _TYPE_RULES:
        if pattern.search(text):
            return kind
    return "empirical"


def entities(text: str) -> list[str]:
    """Named things worth checking in the evidence: names, acronyms, gene-like ids."""
    found: list[str] = []
    run: list[str] = []
    tokens = list(_TOKEN.finditer(text))
    for i, match in enumerate(tokens + [None]):
        token = match.group(0).rstrip("'") if match else ""
        initial = i == 0
        if run and match is not None and text[tokens[i - 1].end() : match.start()] != " ":
            token, pending = "", match  # punctuation ends a name: "Sall4, Nanog" are two
        else:
            pending = None
        if token and _is_name(token) and not (initial and _is_plain_capital(token)):
            run.append(token)
            continue
        if token in NAME_CONNECTORS and run:
            run.append(token)
            continue
        while run and run[-1] in NAME_CONNECTORS:
            run.pop()
        name = " ".join(run)
        if name and name not in found and name not in SENTENCE_STARTERS:
            found.append(name)
        run = []
        if pending is not None:
            again = pending.group(0).rstrip("'")
            if _is_name(again) and not (initial and _is_plain_capital(again)):
                run.append(again)
    return found


def time_sensitivity(text: str, kind: str) -> str:
    if kind == "current-state":
        return "current-state"
    if FAST_CHANGING_CUE.search(text) and kind in ("numerical", "comparative", "empirical"):
        return "fast-changing"
    if kind in ("historical", "definitional", "mechanistic") or years(text):
        return "stable"
    return "slow-changing"


def describe(text: str) -> dict[str, object]:
    """Everything the miner attaches to a claim text."""
    kind = claim_type(text)
    return {
        "claim_type": kind,
        "entities": entities(text),
        "numbers": [q.as_dict() for q in quantities(text)],
        "hedges": hedges(text),
        "time_sensitivity": time_sensitivity(text, kind),
    }
