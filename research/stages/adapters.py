"""Where a query can go: the plan's library (hybrid retrieval) and the enabled web adapters.

Each adapter answers ``search(text, query_class, limit) -> list[FoundHit]``. Web adapters
are the ones the settings enable (``research.providers.search.enabled_adapters``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ledger.models import Library
from ledger.services.search_hits import FoundHit
from research import retrieval
from research.pipeline.retrieve.records import Filters, RetrievalRequest
from research.providers.search import SearchAdapter as SearchProvider
from research.providers.search import enabled_adapters, run_search_sync

# Which adapter serves which source classes of a query.
LIBRARY_CLASSES = {"library"}
WEB_CLASSES = {
    "searxng": {"web", "news", "documentation"},
    "arxiv": {"preprint", "paper"},
    "openalex": {"paper"},
    "wikipedia": {"encyclopedia"},
}


class SearchAdapter(Protocol):
    name: str
    classes: set[str]
    notes: dict[str, str]  # what it could not do (e.g. no reranker)
    errors: list[str]  # queries that failed after retries

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]: ...


class LibraryAdapter:
    """Document-level hybrid retrieval over one library's passages."""

    classes = LIBRARY_CLASSES

    def __init__(self, library: Library) -> None:
        self.library = library
        self.name = "library"
        self.notes: dict[str, str] = {}
        self.errors: list[str] = []

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]:
        request = RetrievalRequest(
            text=text,
            limit=limit,
            level="document",
            query_class=query_class,
            filters=Filters(library_ids=(self.library.pk,)),
        )
        result = retrieval.retrieve(request)
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


class WebAdapter:
    """A web or scholarly search API (with its own rate limit and retries) as FoundHits.

    A query the API fails on, after its retries, yields no hits and an entry in
    ``errors``; the stage reports it and goes on with the other adapters.
    """

    def __init__(self, provider: SearchProvider) -> None:
        self.provider = provider
        self.name: str = provider.name
        self.classes = WEB_CLASSES.get(self.name, {"web"})
        self.notes: dict[str, str] = {}
        self.errors: list[str] = []

    def search(self, text: str, query_class: str, limit: int) -> list[FoundHit]:
        result = run_search_sync([text], [self.provider], limit=limit)
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


@dataclass
class Available:
    adapters: list[SearchAdapter] = field(default_factory=list)

    def for_classes(self, classes: list[str]) -> list[SearchAdapter]:
        wanted = set(classes)
        return [a for a in self.adapters if a.classes & wanted]


def search_adapters(library: Library | None) -> Available:
    """The plan's library (when it has one) and the web adapters the settings enable."""
    available = Available()
    if library is not None:
        available.adapters.append(LibraryAdapter(library))
    available.adapters += [WebAdapter(provider) for provider in enabled_adapters()]
    return available
