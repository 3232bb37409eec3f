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
        self.notes: dict[str, str] = {}  # what retrieval could not do (e.g. no reranker)

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
        self.notes.update(result.notes)
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
    search = optional_module("research.providers.search")
    if search is None:
        from research.services import enabled_web_adapters

        for name in enabled_web_adapters():
            available.unavailable[f"{name} search"] = "not available in this build"
        return
    for provider in search.enabled_adapters():
        available.adapters.append(WebAdapter(provider, search.run_search_sync))


class WebAdapter:
    """A web or scholarly search API (with its own rate limit and retries) as FoundHits.

    A query the API fails on, after its retries, yields no hits and an entry in
    ``errors``; the stage reports it and goes on with the other adapters.
    """

    def __init__(self, provider: Any, run_search: Any) -> None:
        self.provider = provider
        self.run_search = run_search
        self.name: str = provider.name
        self.classes = WEB_CLASSES.get(self.name, {"web"})
        self.errors: list[str] = []

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]:
        result = self.run_search([text], [self.provider], limit=limit)
        self.errors += [f"{o.query!r}: {o.error}" for o in result.errors]
        return [
            FoundHit(
                rank=record.rank,
                score=record.raw_score,
                canonical_id=record.canonical_id or record.url,
                record=record.to_json(),
            )
            for record in result.records
        ]
