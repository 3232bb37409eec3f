"""arXiv search through its Atom API (``export.arxiv.org/api/query``).

arXiv asks clients to wait three seconds between requests (``min_interval_s``). A plain
query becomes an AND of ``all:`` terms; a query that already uses arXiv field prefixes
(``ti:``, ``au:``, ``abs:``, ``cat:`` …) is passed through unchanged. Errors come as an
Atom feed whose single entry has an ``api/errors`` id; they are permanent (bad query).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import httpx

from research.pipeline.identity import extract_arxiv_id
from research.pipeline.language.formats import ARXIV_FIELD_PREFIX
from research.pipeline.language.lexicon import STOPWORDS
from research.providers.search.base import (
    SearchAdapter,
    SearchRecord,
    build_record,
    clean_text,
    now_utc,
    parse_date,
)

NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
ENDPOINT = "https://export.arxiv.org/api/query"
_TERM_RE = re.compile(r"[\w][\w\-.]*")


def build_query(query: str) -> str:
    """arXiv ``search_query`` for free text: ``all:term AND all:"hyphen-term" …``."""
    if ARXIV_FIELD_PREFIX.search(query):
        return query.strip()
    words = [term.rstrip(".-") for term in _TERM_RE.findall(query)]
    terms = [term for term in words if term.lower() not in STOPWORDS] or words
    return " AND ".join(f'all:"{t}"' if "-" in t or "." in t else f"all:{t}" for t in terms)


class ArxivAdapter(SearchAdapter):
    name = "arxiv"
    default_interval_s = 3.0

    def __init__(
        self,
        *,
        endpoint: str = ENDPOINT,
        timeout_s: float = 20.0,
        min_interval_s: float | None = None,
    ) -> None:
        super().__init__(timeout_s=timeout_s, min_interval_s=min_interval_s)
        self.endpoint = endpoint

    @classmethod
    def from_settings(cls) -> ArxivAdapter | None:
        from django.conf import settings

        if not settings.ARXIV_ENABLED:
            return None
        return cls(timeout_s=getattr(settings, "SEARCH_TIMEOUT_S", 20.0))

    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchRecord]:
        search_query = build_query(query)
        if not search_query:
            raise self.error(f"query {query!r} has no searchable terms", permanent=True)
        params = {
            "search_query": search_query,
            "start": 0,
            "max_results": limit,
            "sortBy": "relevance",
            "sortOrder": "descending",
        }
        response = await self.get(client, self.endpoint, params)
        return self.parse(response.content, query)[:limit]

    def error_detail(self, response: httpx.Response) -> str:
        try:
            feed = ET.fromstring(response.content)
        except ET.ParseError:
            return super().error_detail(response)
        summary = feed.findtext("atom:entry/atom:summary", default="", namespaces=NS)
        return clean_text(summary) or super().error_detail(response)

    def parse(self, content: bytes, query: str) -> list[SearchRecord]:
        try:
            feed = ET.fromstring(content)
        except ET.ParseError as exc:
            raise self.error(f"malformed Atom feed: {exc}", permanent=True) from exc
        entries = feed.findall("atom:entry", NS)
        if len(entries) == 1 and "api/errors" in entries[0].findtext("atom:id", "", NS):
            detail = clean_text(entries[0].findtext("atom:summary", "", NS))
            raise self.error(f"API error: {detail}", permanent=True)
        retrieved_at = now_utc()
        records = (self._record(query, rank, e, retrieved_at) for rank, e in enumerate(entries, 1))
        return [record for record in records if record is not None]

    def _record(
        self, query: str, rank: int, entry: ET.Element, retrieved_at: Any
    ) -> SearchRecord | None:
        entry_id = entry.findtext("atom:id", "", NS).strip()
        arxiv_id = extract_arxiv_id(entry_id)
        if not arxiv_id:
            return None
        versioned = entry_id.rsplit("/abs/", 1)[-1]
        return build_record(
            adapter=self.name,
            query=query,
            rank=rank,
            title=entry.findtext("atom:title", "", NS),
            url=f"https://arxiv.org/abs/{versioned}",
            snippet=entry.findtext("atom:summary", "", NS),
            source_type="preprint",
            retrieved_at=retrieved_at,
            doi=entry.findtext("arxiv:doi", "", NS).strip(),
            arxiv_id=arxiv_id,
            date=parse_date(entry.findtext("atom:published", "", NS)),
            authors=tuple(clean_text(a.text) for a in entry.findall("atom:author/atom:name", NS)),
            publisher=clean_text(entry.findtext("arxiv:journal_ref", "", NS)) or "arXiv",
            extra=_extra(entry, versioned),
        )


def _extra(entry: ET.Element, versioned: str) -> dict[str, Any]:
    primary = entry.find("arxiv:primary_category", NS)
    pdf = next(
        (
            link.get("href", "")
            for link in entry.findall("atom:link", NS)
            if link.get("title") == "pdf"
        ),
        f"https://arxiv.org/pdf/{versioned}",
    )
    return {
        "arxiv_version_id": versioned,
        "pdf_url": pdf,
        "primary_category": primary.get("term", "") if primary is not None else "",
        "updated": entry.findtext("atom:updated", "", NS).strip(),
        "comment": clean_text(entry.findtext("arxiv:comment", "", NS)),
    }
