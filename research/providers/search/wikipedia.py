"""Wikipedia full-text search through the MediaWiki Action API (``list=search``).

MediaWiki reports most errors with HTTP 200 and an ``error`` object; ``maxlag``,
``ratelimited`` and internal errors are retryable, the rest (bad parameters) permanent.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx

from research.providers.search.base import (
    SearchAdapter,
    SearchRecord,
    build_record,
    now_utc,
    parse_date,
)

_LANG_RE = re.compile(r"^[a-z][a-z0-9-]{1,19}$")
_RETRYABLE_CODES = ("maxlag", "ratelimited", "readonly", "internal_api_error")


class WikipediaAdapter(SearchAdapter):
    name = "wikipedia"
    default_interval_s = 0.2

    def __init__(
        self, lang: str = "en", *, timeout_s: float = 15.0, min_interval_s: float | None = None
    ) -> None:
        super().__init__(timeout_s=timeout_s, min_interval_s=min_interval_s)
        if not _LANG_RE.match(lang):
            raise ValueError(f"WIKIPEDIA_LANG must be a language code like 'en', got {lang!r}")
        self.lang = lang

    @classmethod
    def from_settings(cls) -> WikipediaAdapter | None:
        from django.conf import settings

        if not settings.WIKIPEDIA_ENABLED:
            return None
        timeout_s = getattr(settings, "SEARCH_TIMEOUT_S", 15.0)
        return cls(settings.WIKIPEDIA_LANG, timeout_s=timeout_s)

    @property
    def endpoint(self) -> str:
        return f"https://{self.lang}.wikipedia.org/w/api.php"

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchRecord]:
        params = {
            "action": "query",
            "list": "search",
            "srsearch": query,
            "srlimit": min(limit, 500),
            "srprop": "snippet|timestamp|wordcount",
            "format": "json",
            "formatversion": 2,
            "maxlag": 5,
        }
        data = self.json(await self.get(client, self.endpoint, params))
        self._raise_api_error(data)
        hits = data.get("query", {}).get("search") if isinstance(data, dict) else None
        if not isinstance(hits, list):
            raise self.error("malformed response: no query.search list", permanent=True)
        retrieved_at = now_utc()
        records = (self._record(query, rank, hit, retrieved_at) for rank, hit in enumerate(hits, 1))
        return [record for record in records if record is not None][:limit]

    def _raise_api_error(self, data: Any) -> None:
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict):
            return
        code = str(error.get("code", "unknown"))
        message = f"API error {code}: {error.get('info', '')}"
        raise self.error(message, permanent=not code.startswith(_RETRYABLE_CODES))

    def page_url(self, title: str) -> str:
        return f"https://{self.lang}.wikipedia.org/wiki/" + quote(
            title.replace(" ", "_"), safe=";:@$!*(),/~"
        )

    def _record(self, query: str, rank: int, hit: Any, retrieved_at: Any) -> SearchRecord | None:
        if not isinstance(hit, dict) or not hit.get("title"):
            return None
        title = str(hit["title"])
        return build_record(
            adapter=self.name,
            query=query,
            rank=rank,
            title=title,
            url=self.page_url(title),
            snippet=str(hit.get("snippet") or ""),
            source_type="encyclopedia",
            retrieved_at=retrieved_at,
            date=parse_date(hit.get("timestamp")),
            publisher=f"{self.lang}.wikipedia.org",
            extra={"pageid": hit.get("pageid"), "wordcount": hit.get("wordcount")},
        )
