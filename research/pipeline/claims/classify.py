"""Claim type, entities, numbers, hedges and time sensitivity, by deterministic rules.

The first matching type wins, in order of how demanding its evidence requirement is
(seeds/000: numerical needs an exact number and unit, current-state a recent source,
comparative evidence for both sides, causal more than correlation, ...).
"""

from __future__ import annotations

import re

from research.pipeline.text import hedges, quantities, years

_TYPE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "recommendation",
        re.compile(
            r"\b(should|ought to|recommend\w*|is advised|are advised|best practice|"
            r"must be (?:used|avoided|given)|is preferred)\b",
            re.I,
        ),
    ),
    (
        "current-state",
        re.compile(
            r"\b(currently|current|now|nowadays|today|as of|at present|presently|latest|"
            r"state[- ]of[- ]the[- ]art|recent(?:ly)?|this year|still)\b",
            re.I,
        ),
    ),
    (
        "comparative",
        re.compile(
            r"\b(than|compared (?:with|to)|versus|vs\.?|outperform\w*|superior|inferior|"
            r"better|worse|relative to|in contrast to)\b",
            re.I,
        ),
    ),
    (
        "causal",
        re.compile(
            r"\b(caus\w*|leads? to|led to|results? in|resulted in|induc\w*|due to|because|"
            r"prevent\w*|triggers?|drives?|responsible for|contributes? to|promot\w*|"
            r"inhibit\w*|protects?|confers?)\b",
            re.I,
        ),
    ),
    (
        "historical",
        re.compile(
            r"\b(was (?:first |originally )?(?:introduced|proposed|invented|discovered|founded|"
            r"developed|described|published)|were (?:first )?(?:introduced|discovered)|"
            r"first (?:described|reported|proposed)|in the (?:\d{2}th|\w+teenth) century)\b",
            re.I,
        ),
    ),
    (
        "temporal",
        re.compile(
            r"\b(in|since|until|before|after|between|during|by) (1[6-9]\d\d|20\d\d)\b", re.I
        ),
    ),
    (
        "definitional",
        re.compile(
            r"\b(is defined as|refers? to|is a (?:type|kind|class|form|family) of|"
            r"is known as|are known as|means|denotes|consists? of|is an? \w+ (?:that|which))\b",
            re.I,
        ),
    ),
    (
        "mechanistic",
        re.compile(
            r"\b(by (?:\w+ing)|through|via|mechanism\w*|pathway\w*|binds?|bound|activat\w*|"
            r"phosphorylat\w*|regulat\w*|mediat\w*|encod\w*|works by|interacts? with|"
            r"signal\w*)\b",
            re.I,
        ),
    ),
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-/']*")
_CONNECTORS = frozenset({"of", "de", "van", "von", "der", "la"})


def _is_name(token: str) -> bool:
    """Capitalized, an acronym, mixed case (GitHub, mRNA) or a gene-like id (IL-18)."""
    return (
        token[0].isupper()
        or any(c.isupper() for c in token[1:])
        or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
    )


def _is_plain_capital(token: str) -> bool:
    return token[0].isupper() and token[1:].islower() and token.isalpha()


_FAST = re.compile(
    r"\b(price\w*|pricing|cost\w*|leaderboard|rank\w*|version|release\w*|api|model|"
    r"market|share|users|subscribers|ceo|president|record)\b",
    re.I,
)
_SENTENCE_STARTERS = frozenset(
    [
        "The",
        "This",
        "These",
        "That",
        "Those",
        "A",
        "An",
        "In",
        "On",
        "At",
        "For",
        "From",
        "By",
        "With",
        "We",
        "Our",
        "It",
        "Its",
        "Here",
        "However",
    ]
)


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
        if token in _CONNECTORS and run:
            run.append(token)
            continue
        while run and run[-1] in _CONNECTORS:
            run.pop()
        name = " ".join(run)
        if name and name not in found and name not in _SENTENCE_STARTERS:
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
    if _FAST.search(text) and kind in ("numerical", "comparative", "empirical"):
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
