"""Query-class hooks: the extra query variants a query class asks retrieval to run.

Deterministic and offline. A counter-evidence query also runs its adversarial rewrites
(negated, direction flipped, "limitations of") and their hits form the refute pool; a
limitation query adds failure wording. Register more hooks with ``register``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

SUPPORT = "support"
REFUTE = "refute"


@dataclass(frozen=True)
class QueryVariant:
    text: str
    role: str  # "original" or the rewrite that made it ("negated", "flipped", …)
    pool: str = SUPPORT


Hook = Callable[[str], list[QueryVariant]]
_HOOKS: dict[str, Hook] = {}

_NEGATED = re.compile(
    r"\b(?:(?:is|are|was|were|does|do|did|can|could|will|may|has|have)\s+not|no|never|"
    r"(?:is|are|was|were|does|do|did|ca|could|wo|has|have)n't|cannot|lacks?|fails? to)\b",
    re.IGNORECASE,
)
_AUXILIARY = re.compile(
    r"\b(is|are|was|were|does|do|did|can|could|will|may|has|have)\b", re.IGNORECASE
)
_OPPOSITES = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "higher": "lower",
    "more": "less",
    "improves": "worsens",
    "improved": "worsened",
    "promotes": "inhibits",
    "activates": "suppresses",
    "positive": "negative",
    "positively": "negatively",
    "up-regulates": "down-regulates",
    "upregulates": "downregulates",
    "raises": "reduces",
    "enhances": "impairs",
    "benefit": "harm",
    "effective": "ineffective",
    "associated": "unassociated",
}
_FLIP = {**_OPPOSITES, **{v: k for k, v in _OPPOSITES.items()}}
_FLIP_WORD = re.compile(r"\b(" + "|".join(map(re.escape, _FLIP)) + r")\b", re.IGNORECASE)


def register(query_class: str, hook: Hook) -> None:
    _HOOKS[query_class] = hook


def negate(text: str) -> str:
    """Remove an explicit negation, or insert one after the first auxiliary verb."""
    stripped = _NEGATED.sub(_drop_negation, text, count=1)
    if stripped != text:
        return re.sub(r"\s{2,}", " ", stripped).strip()
    inserted = _AUXILIARY.sub(lambda m: f"{m.group(1)} not", text, count=1)
    return inserted if inserted != text else f"no evidence that {text}"


def _drop_negation(match: re.Match[str]) -> str:
    word = match.group(0).lower()
    for aux in ("is", "are", "was", "were", "does", "do", "did", "could", "has", "have"):
        if word.startswith(aux + " not") or word == aux + "n't":
            return match.group(0)[: len(aux)]
    return {"cannot": "can", "can't": "can", "won't": "will", "lack": "have", "lacks": "has"}.get(
        word, ""
    )


def flip_direction(text: str) -> str:
    """Swap directional words (increases <-> decreases, higher <-> lower, …)."""

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        new = _FLIP[word.lower()]
        return new.capitalize() if word[:1].isupper() else new

    return _FLIP_WORD.sub(swap, text)


def adversarial(text: str) -> list[QueryVariant]:
    """Rewrites of a claim that retrieve what would make it wrong: its refute pool."""
    variants = [QueryVariant(negate(text), "negated", REFUTE)]
    flipped = flip_direction(text)
    if flipped != text:
        variants.append(QueryVariant(flipped, "flipped", REFUTE))
    variants.append(QueryVariant(f"limitations failure contradicts {text}", "limits", REFUTE))
    return variants


def counter_evidence(text: str) -> list[QueryVariant]:
    """A counter-evidence query is adversarial already: add its limitations wording."""
    return [QueryVariant(f"{text} limitations failure contradicts", "limits", REFUTE)]


def limitation(text: str) -> list[QueryVariant]:
    return [QueryVariant(f"{text} limitations failure cases", "limits", SUPPORT)]


def variants(text: str, query_class: str = "", *, refute: bool = False) -> list[QueryVariant]:
    """The original query plus its class's rewrites (distinct texts, order kept).

    ``refute=True`` adds the adversarial rewrites (refute pool) whatever the class: a
    claim's support pool is the original query, its refute pool the rewrites.
    """
    own_pool = REFUTE if query_class == "counter-evidence" else SUPPORT
    out = [QueryVariant(text, "original", own_pool)]
    hook = _HOOKS.get(query_class)
    if hook is not None:
        out += hook(text)
    if refute:
        out += adversarial(text)
    seen: set[str] = set()
    unique = []
    for variant in out:
        key = variant.text.strip().lower()
        if key and key not in seen:
            seen.add(key)
            unique.append(variant)
    return unique


register("counter-evidence", counter_evidence)
register("limitation", limitation)
