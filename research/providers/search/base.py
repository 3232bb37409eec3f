"""The search adapter interface and the normalized record every adapter returns.

An adapter makes exactly one attempt per ``search`` call and raises ``SearchError``
with ``permanent`` set; retries, rate limits and timeouts belong to the runner
(``runner.py``), so every adapter gets the same policy. All HTTP goes through the
``httpx.AsyncClient`` the runner passes in, built by ``runner.make_client`` — the one
chokepoint where tests inject an ``httpx.MockTransport``.
"""

from __future__ import annotations

import html
import re
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from typing import Any, ClassVar

import httpx

from research.pipeline.identity import extract_doi, lenient_canonical_id, normalize_arxiv_id
from research.providers.base import ProviderError

_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_RE = re.compile(r"\s+")
_ERROR_EXCERPT = 300


class SearchError(ProviderError):
    """One failed attempt; ``retry_after`` carries a server's Retry-After in seconds."""

    def __init__(
        self, message: str, *, permanent: bool, adapter: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message, permanent=permanent, provider=adapter)
        self.retry_after = retry_after


@dataclass(frozen=True)
class SearchRecord:
    """One result of one adapter for one query, normalized across adapters."""

    adapter: str  # adapter name: searxng, arxiv, openalex, wikipedia
    query: str  # the query text as sent
    rank: int  # 1-based position in the adapter's answer
    title: str
    url: str  # where the document can be fetched or read
    snippet: str  # plain text (markup stripped, entities decoded)
    source_type: str  # a ledger.models.SourceType value
    canonical_id: str  # research.pipeline.identity.canonical_id of url/doi/arxiv id
    retrieved_at: datetime  # when the adapter answered (UTC)
    identifier: str = ""  # "doi:…" or "arxiv:…" when the adapter names one, else ""
    doi: str = ""  # normalized bare DOI, lower-case
    arxiv_id: str = ""  # arXiv id without version
    date: date | None = None  # publication date (last edit for wiki pages)
    raw_score: float | None = None  # the adapter's own relevance score, if it has one
    authors: tuple[str, ...] = ()
    publisher: str = ""  # venue, journal or site name
    extra: dict[str, Any] = field(default_factory=dict)  # adapter-specific, JSON-safe

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict, e.g. for ``SearchHit.record``."""
        data = asdict(self)
        data["retrieved_at"] = self.retrieved_at.isoformat()
        data["date"] = self.date.isoformat() if self.date else None
        data["authors"] = list(self.authors)
        return data


def build_record(
    *,
    adapter: str,
    query: str,
    rank: int,
    title: str,
    url: str,
    snippet: str,
    source_type: str,
    retrieved_at: datetime,
    doi: str = "",
    arxiv_id: str = "",
    **optional: Any,
) -> SearchRecord | None:
    """A record with identity filled in; None when nothing identifies the result."""
    identity = lenient_canonical_id(url, doi, arxiv_id)
    if identity is None:
        return None
    prefix = identity.split(":", 1)[0]
    identifier = identity if prefix in ("doi", "arxiv") else ""
    return SearchRecord(
        adapter=adapter,
        query=query,
        rank=rank,
        title=clean_text(title),
        url=url,
        snippet=clean_text(snippet),
        source_type=source_type,
        canonical_id=identity,
        retrieved_at=retrieved_at,
        identifier=identifier,
        doi=(extract_doi(doi) or "") if doi else (identity[4:] if prefix == "doi" else ""),
        arxiv_id=_arxiv(arxiv_id) if arxiv_id else (identity[6:] if prefix == "arxiv" else ""),
        **optional,
    )


def _arxiv(value: str) -> str:
    try:
        return normalize_arxiv_id(value)
    except ValueError:
        return ""


def clean_text(value: str | None) -> str:
    """Plain text from an API string that may carry HTML markup and entities."""
    if not value:
        return ""
    return _SPACE_RE.sub(" ", html.unescape(_TAG_RE.sub("", value))).strip()


def parse_date(value: Any) -> date | None:
    """A date from ISO strings like 2024-05-01, 2024-05-01T10:00:00Z; None if unusable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def now_utc() -> datetime:
    return datetime.now(UTC)


class SearchAdapter(ABC):
    """One search API. Subclasses set ``name`` and implement ``from_settings``/``search``."""

    name: ClassVar[str]
    default_interval_s: ClassVar[float] = 0.5  # the API's courtesy interval between requests

    def __init__(self, *, timeout_s: float = 15.0, min_interval_s: float | None = None) -> None:
        self.timeout_s = timeout_s
        self.min_interval_s = self.default_interval_s if min_interval_s is None else min_interval_s

    @classmethod
    @abstractmethod
    def from_settings(cls) -> SearchAdapter | None:
        """The adapter configured by settings, or None when it is disabled."""

    @abstractmethod
    async def search(self, client: httpx.AsyncClient, query: str, limit: int) -> list[SearchRecord]:
        """One attempt: up to ``limit`` records for ``query``, or raise SearchError."""

    def error(
        self, message: str, *, permanent: bool, retry_after: float | None = None
    ) -> SearchError:
        return SearchError(message, permanent=permanent, adapter=self.name, retry_after=retry_after)

    async def get(
        self, client: httpx.AsyncClient, url: str, params: dict[str, Any]
    ) -> httpx.Response:
        """GET with transport errors and HTTP statuses turned into SearchError."""
        try:
            response = await client.get(url, params=params, timeout=self.timeout_s)
        except httpx.TimeoutException as exc:
            message = f"timed out after {self.timeout_s:g} s ({type(exc).__name__})"
            raise self.error(message, permanent=False) from exc
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise self.error(f"bad endpoint URL: {exc}", permanent=True) from exc
        except httpx.HTTPError as exc:
            message = f"transport error: {type(exc).__name__}: {exc}"
            raise self.error(message, permanent=False) from exc
        self.raise_for_status(response)
        return response

    def raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        detail = self.error_detail(response)
        message = f"HTTP {status}" + (f": {detail}" if detail else "")
        if status in (408, 429) or status >= 500:
            retry_after = _retry_after(response.headers.get("retry-after", ""))
            raise self.error(message, permanent=False, retry_after=retry_after)
        raise self.error(message, permanent=True)

    def error_detail(self, response: httpx.Response) -> str:
        """A short reason from an error body; adapters override for structured errors."""
        return clean_text(response.text[:_ERROR_EXCERPT])

    def json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise self.error(f"malformed JSON response: {exc}", permanent=True) from exc


def _retry_after(value: str) -> float | None:
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None
