"""Where a query can go: the plan's library (hybrid retrieval) and the enabled web adapters.

Each adapter answers ``search(text, query_class, limit) -> list[FoundHit]``. A piece
that is missing from this build or not configured is reported by name and reason in
``Available.unavailable``, and the stage shows it; nothing is faked in its place.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from ledger.models import Library

# Which adapter serves which source classes of a query.
LIBRARY_CLASSES = {"library"}
WEB_CLASSES = {
    "searxng": {"web", "news", "documentation"},
    "arxiv": {"preprint", "paper"},
    "openalex": {"paper"},
    "wikipedia": {"encyclopedia"},
}


@dataclass(frozen=True)
class FoundHit:
    """One normalized search result, before it becomes a SearchHit row."""

    rank: int
    score: float | None
    canonical_id: str
    record: dict[str, Any]
    source_id: int | None = None


class SearchAdapter(Protocol):
    name: str
    classes: set[str]

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]: ...


def optional_module(name: str) -> Any | None:
    """Import another helper's module if this build has it (None when it does not)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class LibraryAdapter:
    """Document-level hybrid retrieval over one library's passages."""

    classes = LIBRARY_CLASSES

    def __init__(self, library: Library, retrieval: Any) -> None:
        self.library = library
        self.retrieval = retrieval
        self.name = "library"

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]:
        from research.pipeline.retrieve.records import Filters, RetrievalRequest

        request = RetrievalRequest(
            text=text,
            limit=limit,
            level="document",
            query_class=query_class,
            filters=Filters(library_ids=(self.library.pk,)),
        )
        result = self.retrieval.retrieve(request)
        return [
            FoundHit(
                rank=rank,
                score=float(hit.score),
                canonical_id=hit.canonical_id,
                source_id=hit.source_id or None,
                record={
                    "title": hit.title,
                    "snippet": hit.text[:500],
                    "passage_id": hit.passage_id,
                    "library": self.library.name,
                    **hit.provenance(),
                },
            )
            for rank, hit in enumerate(result.hits, start=1)
        ]


@dataclass
class Available:
    adapters: list[SearchAdapter] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)

    def for_classes(self, classes: list[str]) -> list[SearchAdapter]:
        wanted = set(classes)
        return [a for a in self.adapters if a.classes & wanted]


def search_adapters(library: Library | None) -> Available:
    """The adapters this build and these settings offer for a plan."""
    available = Available()
    if library is not None:
        retrieval = optional_module("research.retrieval")
        if retrieval is None or not hasattr(retrieval, "retrieve"):
            available.unavailable["library search"] = "not available in this build"
        else:
            available.adapters.append(LibraryAdapter(library, retrieval))
    _add_web_adapters(available)
    return available


def _add_web_adapters(available: Available) -> None:
    from research.services import enabled_web_adapters

    enabled = enabled_web_adapters()
    if not enabled:
        return
    registry = optional_module("research.providers.search")
    factory = getattr(registry, "adapter_from_settings", None) if registry else None
    for name in enabled:
        if factory is None:
            available.unavailable[f"{name} search"] = "not available in this build"
            continue
        available.adapters.append(WebAdapter(name, factory(name)))


class WebAdapter:
    """A web or scholarly search provider, normalized to FoundHit."""

    def __init__(self, name: str, provider: Any) -> None:
        self.name = name
        self.provider = provider
        self.classes = WEB_CLASSES.get(name, {"web"})

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]:
        records = self.provider.search(text, limit=limit)
        out = []
        for rank, rec in enumerate(records, start=1):
            data = rec if isinstance(rec, dict) else dict(vars(rec))
            out.append(
                FoundHit(
                    rank=rank,
                    score=data.get("raw_score"),
                    canonical_id=str(data.get("canonical_id") or data.get("url") or ""),
                    record={k: _plain(v) for k, v in data.items()},
                )
            )
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)
