"""Query-class hooks: the extra query variants a query class asks retrieval to run.

Deterministic and offline. A counter-evidence or limitation query also runs with failure
and limitation wording. Register more hooks with ``register``. A claim's refutation
queries are made in one place only, :func:`research.pipeline.counter.counter_queries`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class QueryVariant:
    text: str
    role: str  # "original" or the hook's name for its rewrite ("limits", …)


Hook = Callable[[str], list[QueryVariant]]
_HOOKS: dict[str, Hook] = {}


def register(query_class: str, hook: Hook) -> None:
    _HOOKS[query_class] = hook


def counter_evidence(text: str) -> list[QueryVariant]:
    """A counter-evidence query is adversarial already: add its limitations wording."""
    return [QueryVariant(f"{text} limitations failure contradicts", "limits")]


def limitation(text: str) -> list[QueryVariant]:
    return [QueryVariant(f"{text} limitations failure cases", "limits")]


def variants(text: str, query_class: str = "") -> list[QueryVariant]:
    """The original query plus its class's rewrites (distinct texts, order kept)."""
    out = [QueryVariant(text, "original")]
    hook = _HOOKS.get(query_class)
    if hook is not None:
        out += hook(text)
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
