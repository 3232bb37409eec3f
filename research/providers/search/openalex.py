"""OpenAlex works search (``api.openalex.org/works?search=…``).

With OPENALEX_MAILTO set, requests carry ``mailto`` and join OpenAlex's polite pool.
The abstract arrives as an inverted index (word -> positions) and is rebuilt for the
snippet. Error bodies are JSON ``{"error": …, "message": …}``.
"""

from __future__ import annotations

from typing import Any

import httpx

from research.providers.search.base import (
    SearchAdapter,
    SearchRecord,
    build_record,
    clean_text,
    now_utc,
    parse_date,
)

ENDPOINT = "https://api.openalex.org/works"
SNIPPET_CHARS = 600
_TYPES = {
    "preprint": "preprint",
    "posted-content": "preprint",
    "dataset": "dataset",
    "paratext": "other",
    "other": "other",
}


def rebuild_abstract(inverted: Any) -> str:
    """Text from OpenAlex's ``abstract_inverted_index`` ('' when absent or malformed)."""
    if not isinstance(inverted, dict):
        return ""
    placed: dict[int, str] = {}
    for word, positions in inverted.items():
        for position in positions if isinstance(positions, list) else []:
            if isinstance(position, int):
                placed[position] = str(word)
    return " ".join(placed[i] for i in sorted(placed))


class OpenAlexAdapter(SearchAdapter):
    name = "openalex"
    default_interval_s = 0.1  # OpenAlex allows 10 requests per second

    def __init__(
        self,
        *,
        mailto: str = "",
        endpoint: str = ENDPOINT,
        timeout_s: float = 15.0,
        min_interval_s: float | None = None,
    ) -> None:
        super().__init__(timeout_s=timeout_s, min_interval_s=min_interval_s)
        self.mailto = mailto
        self.endpoint = endpoint

    @classmethod
    def from_settings(cls) -> OpenAlexAdapter | None:
        from django.conf import settings

        if not settings.OPENALEX_ENABLED:
            return None
        timeout_s = getattr(settings, "SEARCH_TIMEOUT_S", 15.0)
        return cls(mailto=settings.OPENALEX_MAILTO, timeout_s=timeout_s)

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchRecord]:
        params: dict[str, Any] = {"search": query, "per-page": min(limit, 200), "page": 1}
        if self.mailto:
            params["mailto"] = self.mailto
        data = self.json(await self.get(client, self.endpoint, params))
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise self.error("malformed response: no 'results' list", permanent=True)
        retrieved_at = now_utc()
        records = (
            self._record(query, rank, work, retrieved_at) for rank, work in enumerate(results, 1)
        )
        return [record for record in records if record is not None][:limit]

    def error_detail(self, response: httpx.Response) -> str:
        try:
            body = response.json()
        except ValueError:
            return super().error_detail(response)
        if isinstance(body, dict) and (body.get("message") or body.get("error")):
            return clean_text(str(body.get("message") or body.get("error")))
        return super().error_detail(response)

    def _record(self, query: str, rank: int, work: Any, retrieved_at: Any) -> SearchRecord | None:
        if not isinstance(work, dict):
            return None
        location = work.get("primary_location") or {}
        source = location.get("source") or {}
        doi_url = str(work.get("doi") or "")
        score = work.get("relevance_score")
        return build_record(
            adapter=self.name,
            query=query,
            rank=rank,
            title=str(work.get("display_name") or work.get("title") or ""),
            url=str(location.get("landing_page_url") or doi_url or work.get("id") or ""),
            snippet=rebuild_abstract(work.get("abstract_inverted_index"))[:SNIPPET_CHARS],
            source_type=_TYPES.get(str(work.get("type") or ""), "paper"),
            retrieved_at=retrieved_at,
            doi=doi_url,
            date=parse_date(work.get("publication_date")),
            raw_score=float(score) if isinstance(score, int | float) else None,
            authors=_authors(work),
            publisher=str(source.get("display_name") or ""),
            extra=_extra(work),
        )


def _authors(work: dict[str, Any]) -> tuple[str, ...]:
    names = ((a.get("author") or {}).get("display_name") for a in work.get("authorships") or [])
    return tuple(str(name) for name in names if name)


def _extra(work: dict[str, Any]) -> dict[str, Any]:
    best = work.get("best_oa_location") or {}
    return {
        "openalex_id": work.get("id", ""),
        "pdf_url": best.get("pdf_url") or "",
        "is_oa": bool((work.get("open_access") or {}).get("is_oa")),
        "cited_by_count": work.get("cited_by_count"),
        "publication_year": work.get("publication_year"),
    }
