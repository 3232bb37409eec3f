"""SearXNG metasearch through its JSON API (``/search?format=json``).

The instance must allow the JSON format (``search.formats: [html, json]`` in its
settings.yml); otherwise it answers 403, reported as a permanent error with that hint.
SEARXNG_URL is an operator-configured endpoint, often on a private network, so it is
not subject to the fetcher's SSRF guard.
"""

from __future__ import annotations

from typing import Any

import httpx

from research.pipeline.identity import extract_arxiv_id, extract_doi, host_of
from research.providers.search.base import (
    SearchAdapter,
    SearchRecord,
    build_record,
    now_utc,
    parse_date,
)

_CATEGORY_TYPES = {"science": "paper", "news": "news", "it": "documentation"}


class SearxngAdapter(SearchAdapter):
    name = "searxng"
    default_interval_s = 0.5

    def __init__(
        self,
        base_url: str,
        *,
        categories: str = "general",
        language: str = "",
        timeout_s: float = 15.0,
        min_interval_s: float | None = None,
    ) -> None:
        super().__init__(timeout_s=timeout_s, min_interval_s=min_interval_s)
        self.base_url = base_url.rstrip("/")
        self.categories = categories
        self.language = language

    @classmethod
    def from_settings(cls) -> SearxngAdapter | None:
        from django.conf import settings

        if not settings.SEARXNG_URL:
            return None
        return cls(settings.SEARXNG_URL, timeout_s=getattr(settings, "SEARCH_TIMEOUT_S", 15.0))

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchRecord]:
        params: dict[str, Any] = {"q": query, "format": "json", "pageno": 1}
        if self.categories:
            params["categories"] = self.categories
        if self.language:
            params["language"] = self.language
        data = self.json(await self.get(client, f"{self.base_url}/search", params))
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise self.error("malformed response: no 'results' list", permanent=True)
        retrieved_at = now_utc()
        records = (
            self._record(query, rank, item, retrieved_at) for rank, item in enumerate(results, 1)
        )
        return [record for record in records if record is not None][:limit]

    def error_detail(self, response: httpx.Response) -> str:
        if response.status_code == 403:
            return "forbidden: is the json format enabled in the instance's search.formats?"
        return super().error_detail(response)

    def _record(self, query: str, rank: int, item: Any, retrieved_at: Any) -> SearchRecord | None:
        if not isinstance(item, dict) or not item.get("url"):
            return None
        url = str(item["url"])
        score = item.get("score")
        return build_record(
            adapter=self.name,
            query=query,
            rank=rank,
            title=str(item.get("title") or ""),
            url=url,
            snippet=str(item.get("content") or ""),
            source_type=_source_type(url, str(item.get("category") or "")),
            retrieved_at=retrieved_at,
            doi=extract_doi(url) or "",
            arxiv_id=extract_arxiv_id(url) or "",
            date=parse_date(item.get("publishedDate")),
            raw_score=float(score) if isinstance(score, int | float) else None,
            publisher=host_of(url),
            extra={
                "engines": list(item.get("engines") or []),
                "category": item.get("category", ""),
            },
        )


def _source_type(url: str, category: str) -> str:
    if extract_arxiv_id(url):
        return "preprint"
    if extract_doi(url):
        return "paper"
    if host_of(url).endswith("wikipedia.org"):
        return "encyclopedia"
    return _CATEGORY_TYPES.get(category, "web")
