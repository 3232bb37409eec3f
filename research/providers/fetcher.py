"""Fetch one URL safely: SSRF guard, manual redirects, streamed size cap, sniffing.

``fetch_url`` (async) and ``fetch_url_sync`` return a ``FetchResult`` or raise a
``ProviderError`` subclass whose ``permanent`` flag tells the caller whether a retry
can help: HTTP 4xx is permanent except 408 and 429; 5xx, timeouts, connection and DNS
failures are retryable; SSRF refusals, bad URLs, redirect loops, too many redirects and
oversized bodies are permanent. A retryable failure is tried again through the one HTTP
retry policy (``research.providers.retry``, ``FetchOptions.retry``); the error that ends
the attempts says how many were made.

How each guarantee is kept:

1. Every hop (the first URL and each redirect target) must be http(s) and is vetted by
   ``SSRFGuard`` before any request; redirects are followed here, never by httpx.
2. The connection itself goes through ``GuardedBackend``, which dials the vetted
   address (no second DNS answer can slip in: see ``ssrf.py``).
3. The body is read raw and decompressed here with a bounded output size, so neither a
   long body nor a decompression bomb can exceed ``max_bytes`` in memory; a declared
   ``Content-Length`` over the cap is refused before reading.
4. Each network operation has ``timeout_s``; the whole fetch has ``total_timeout_s``
   (a server dripping one byte a second cannot hold a worker).
5. ``FetchPool`` fetches many pages at once for a synchronous caller, at most
   ``max_concurrent`` in flight and ``max_per_host`` to any one host (a slow page holds
   one slot, not the caller; a site is never asked for more than its share at once).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import ssl
import threading
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import httpcore
import httpx
from asgiref.sync import async_to_sync

from research.pipeline.identity import host_of
from research.providers.base import ProviderError
from research.providers.retry import RetryPolicy, Sleep, retrying
from research.providers.ssrf import AllowList, BlockedAddress, GuardedBackend, SSRFGuard

__all__ = [
    "BlockedAddress",
    "FetchError",
    "FetchHTTPError",
    "FetchOptions",
    "FetchPool",
    "FetchResult",
    "FetchTimeout",
    "FetchTooLarge",
    "TooManyRedirects",
    "UnsupportedURL",
    "effective_content_type",
    "fetch_url",
    "fetch_url_sync",
    "sniff_content_type",
]

ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
KEPT_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "content-disposition",
    "last-modified",
    "etag",
    "date",
    "cache-control",
)
GENERIC_TYPES = frozenset(
    {
        "",
        "application/octet-stream",
        "binary/octet-stream",
        "application/unknown",
        "application/download",
        "application/x-download",
        "application/force-download",
    }
)
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body")
_SNIFF_BYTES = 1024


class FetchError(ProviderError):
    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message, permanent=permanent, provider="fetch")


class UnsupportedURL(FetchError):
    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True)


class FetchTimeout(FetchError):
    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=False)


class FetchTooLarge(FetchError):
    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True)


class TooManyRedirects(FetchError):
    def __init__(self, message: str, chain: list[str]) -> None:
        super().__init__(message, permanent=True)
        self.chain = chain


class FetchHTTPError(FetchError):
    def __init__(self, url: str, status: int) -> None:
        permanent = status < 500 and status not in (408, 429)
        super().__init__(f"HTTP {status} from {url}", permanent=permanent)
        self.status = status


@dataclass(frozen=True)
class FetchOptions:
    """Limits of one fetch; ``from_settings`` reads the FETCH_* settings at call time."""

    timeout_s: float = 20.0
    max_bytes: int = 20 * 1024 * 1024
    max_redirects: int = 5
    user_agent: str = "EvidenceBureau/0.1 (+research tool)"
    allowed_hosts: tuple[str, ...] = ()
    total_timeout_s: float | None = None  # None: three times timeout_s
    ca_bundle: str = ""  # PEM file of trusted CAs; '' means the certifi bundle
    retry: RetryPolicy = RetryPolicy()  # attempts and back-off (HTTP_* settings)
    max_concurrent: int = 4  # FetchPool: fetches in flight at once
    max_per_host: int = 2  # FetchPool: fetches in flight to one host at once

    @classmethod
    def from_settings(cls, **overrides: Any) -> FetchOptions:
        from django.conf import settings

        options = cls(
            timeout_s=settings.FETCH_TIMEOUT_S,
            max_bytes=settings.FETCH_MAX_BYTES,
            max_redirects=settings.FETCH_MAX_REDIRECTS,
            user_agent=settings.FETCH_USER_AGENT,
            allowed_hosts=tuple(settings.FETCH_ALLOWED_HOSTS),
            retry=RetryPolicy.from_settings(),
            max_concurrent=settings.FETCH_CONCURRENCY,
            max_per_host=settings.FETCH_PER_HOST,
        )
        return replace(options, **overrides)

    @property
    def deadline_s(self) -> float:
        return self.total_timeout_s or 3 * self.timeout_s


@dataclass(frozen=True)
class FetchResult:
    """What one successful fetch captured, with its provenance."""

    requested_url: str
    final_url: str
    redirect_chain: tuple[str, ...]  # URLs that redirected, in order (requested first)
    status: int
    headers: dict[str, str]  # the KEPT_HEADERS the server sent, lower-case names
    declared_content_type: str  # media type from Content-Type, '' if none
    sniffed_content_type: str  # from magic bytes, '' if nothing recognised
    content_type: str  # the one to act on (see effective_content_type)
    charset: str  # from Content-Type, '' if none
    body: bytes = field(repr=False)
    sha256: str = ""
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def size(self) -> int:
        return len(self.body)


# -- content type -------------------------------------------------------------------


def sniff_content_type(head: bytes) -> str:
    """Media type recognised from the first bytes ('' when nothing is recognised)."""
    start = head[:_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n\x0c")
    if b"%PDF-" in head[:_SNIFF_BYTES]:
        return "application/pdf"
    for magic, media_type in _MAGIC:
        if start.startswith(magic):
            return media_type
    lower = start.lower()
    if lower.startswith(_HTML_STARTS) or b"<html" in lower:
        return "text/html"
    if lower.startswith(b"<?xml"):
        return "application/xml"
    return ""


def effective_content_type(declared: str, sniffed: str) -> str:
    """Magic bytes beat a generic or textual declaration; a PDF signature always wins."""
    if sniffed == "application/pdf":
        return sniffed
    if sniffed and (declared in GENERIC_TYPES or declared.startswith("text/")):
        return sniffed
    return declared or sniffed or "application/octet-stream"


def _parse_content_type(value: str) -> tuple[str, str]:
    media_type, _, params = value.partition(";")
    charset = ""
    for param in params.split(";"):
        key, _, raw = param.strip().partition("=")
        if key.strip().lower() == "charset":
            charset = raw.strip().strip("\"'").lower()
    return media_type.strip().lower(), charset


# -- body ---------------------------------------------------------------------------


class _Decoder:
    """Content-Encoding decoder whose output per call is bounded (bomb-safe)."""

    def __init__(self, encoding: str) -> None:
        name = encoding.strip().lower()
        self._raw_deflate_tried = False
        if name in ("", "identity"):
            self._z: Any = None
        elif name in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif name == "deflate":
            self._z = zlib.decompressobj(zlib.MAX_WBITS)
        else:
            raise FetchError(f"unsupported Content-Encoding {encoding!r}", permanent=True)

    def feed(self, data: bytes, room: int) -> bytes:
        """Decode ``data``, producing at most ``room + 1`` bytes."""
        if self._z is None:
            return data
        try:
            return bytes(self._z.decompress(data, room + 1))
        except zlib.error as exc:
            if not self._raw_deflate_tried and self._z.unused_data == b"":
                self._raw_deflate_tried = True  # servers that send raw deflate
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, room)
            raise FetchError(f"corrupt compressed body: {exc}", permanent=True) from exc


def _cap_message(url: str, max_bytes: int, detail: str) -> str:
    mib = max_bytes / (1024 * 1024)
    return (
        f"response from {url} {detail} the size cap of {mib:g} MiB "
        f"(FETCH_MAX_BYTES={max_bytes}); cut off"
    )


async def _read_capped(response: httpx.Response, url: str, max_bytes: int) -> bytes:
    declared = response.headers.get("content-length", "").strip()
    if declared.isdigit() and int(declared) > max_bytes:
        raise FetchTooLarge(_cap_message(url, max_bytes, f"declares {declared} bytes, over"))
    decoder = _Decoder(response.headers.get("content-encoding", ""))
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += decoder.feed(chunk, max_bytes - len(body))
        if len(body) > max_bytes:
            raise FetchTooLarge(_cap_message(url, max_bytes, "exceeded"))
    return bytes(body)


# -- fetching -----------------------------------------------------------------------


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx transport whose every TCP connection goes through ``GuardedBackend``."""

    def __init__(self, guard: SSRFGuard, ca_bundle: str = "") -> None:
        super().__init__(trust_env=False)
        if ca_bundle:
            context = ssl.create_default_context(cafile=ca_bundle)
        else:
            context = httpx.create_ssl_context(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=10,
            max_keepalive_connections=5,
            network_backend=GuardedBackend(guard),
        )


def _client(
    options: FetchOptions, guard: SSRFGuard, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=transport or GuardedTransport(guard, options.ca_bundle),
        timeout=httpx.Timeout(options.timeout_s),
        follow_redirects=False,
        trust_env=False,
        headers={
            "User-Agent": options.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": "gzip, deflate",
        },
    )


async def fetch_url(
    url: str,
    *,
    options: FetchOptions | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    sleep: Sleep = asyncio.sleep,
) -> FetchResult:
    """Fetch ``url`` (GET), following up to ``max_redirects`` vetted redirects.

    A retryable failure is tried again as ``options.retry`` says. ``transport`` replaces
    the guarded network layer (tests only); every hop is still vetted before it is
    requested.
    """
    opts = options or FetchOptions.from_settings()

    async def attempt(number: int) -> FetchResult:
        return await _fetch_once(url, opts, transport)

    return await retrying(attempt, opts.retry, sleep=sleep)


async def _fetch_once(
    url: str, opts: FetchOptions, transport: httpx.AsyncBaseTransport | None
) -> FetchResult:
    guard = SSRFGuard(AllowList.parse(opts.allowed_hosts))
    try:
        async with asyncio.timeout(opts.deadline_s), _client(opts, guard, transport) as client:
            return await _follow(client, guard, url, opts)
    except TimeoutError as exc:
        raise FetchTimeout(f"fetching {url} took longer than {opts.deadline_s:g} s") from exc


def fetch_url_sync(url: str, *, options: FetchOptions | None = None) -> FetchResult:
    """``fetch_url`` for synchronous callers (runs on its own event loop)."""
    return async_to_sync(fetch_url)(url, options=options)


class FetchPool:
    """``fetch_url`` for many pages at once, for synchronous callers.

    The pool runs an event loop on a thread of its own; :meth:`submit` returns a
    ``concurrent.futures.Future`` at once, whose result is the ``FetchResult`` or whose
    exception is the fetch's error. At most ``options.max_concurrent`` fetches are in
    flight, and at most ``options.max_per_host`` to one host (a page waiting for its
    host's slot holds no overall one); the rest wait their turn in submission order.
    Leaving the ``with`` block cancels whatever has not finished.
    """

    def __init__(
        self, options: FetchOptions, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.options = options
        self._transport = transport
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="fetch-pool", daemon=True
        )
        self._slots = asyncio.Semaphore(options.max_concurrent)
        self._host_slots: dict[str, asyncio.Semaphore] = {}  # touched on the loop only

    def __enter__(self) -> FetchPool:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def submit(self, url: str) -> concurrent.futures.Future[FetchResult]:
        return asyncio.run_coroutine_threadsafe(self._fetch(url), self._loop)

    async def _fetch(self, url: str) -> FetchResult:
        host = host_of(url)
        if host not in self._host_slots:
            self._host_slots[host] = asyncio.Semaphore(self.options.max_per_host)
        async with self._host_slots[host], self._slots:
            return await fetch_url(url, options=self.options, transport=self._transport)

    def close(self) -> None:
        """Cancel the unfinished fetches, then stop the loop and its thread."""
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(_cancel_others(), self._loop).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()


async def _cancel_others() -> None:
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


async def _follow(
    client: httpx.AsyncClient, guard: SSRFGuard, url: str, opts: FetchOptions
) -> FetchResult:
    chain: list[str] = []
    current = url
    while True:
        await vet_url(guard, current)
        async with _request(client, current) as response:
            location = _redirect_target(response, current)
            if location is None:
                return await _finish(response, url, current, chain, opts)
        chain.append(current)
        if location in chain:
            raise TooManyRedirects(f"redirect loop at {location}", chain)
        if len(chain) > opts.max_redirects:
            message = f"more than {opts.max_redirects} redirects from {url}"
            raise TooManyRedirects(message, chain)
        current = location


async def vet_url(guard: SSRFGuard, url: str) -> None:
    """Refuse non-http(s) URLs and hosts the guard rejects (raises, permanent)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise UnsupportedURL(f"invalid URL {url!r}: {exc}") from exc
    if parsed.scheme not in ("http", "https"):
        raise UnsupportedURL(f"refused to fetch {url!r}: only http and https are fetched")
    if not parsed.host:
        raise UnsupportedURL(f"refused to fetch {url!r}: no host")
    await guard.vet(parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))


@asynccontextmanager
async def _request(client: httpx.AsyncClient, url: str) -> AsyncIterator[httpx.Response]:
    """``client.stream('GET', url)`` with httpx errors (also while reading) as FetchError."""
    try:
        async with client.stream("GET", url) as response:
            yield response
    except httpx.HTTPError as exc:
        raise _map_httpx_error(url, exc) from exc


def _map_httpx_error(url: str, exc: httpx.HTTPError) -> FetchError:
    if isinstance(exc, httpx.TimeoutException):
        return FetchTimeout(f"timed out fetching {url}: {type(exc).__name__}")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return UnsupportedURL(f"cannot fetch {url}: {exc}")
    message = f"transport error fetching {url}: {type(exc).__name__}: {exc}"
    return FetchError(message, permanent="CERTIFICATE_VERIFY_FAILED" in message)


def _redirect_target(response: httpx.Response, url: str) -> str | None:
    if response.status_code not in REDIRECT_STATUSES:
        return None
    location = response.headers.get("location", "").strip()
    return urljoin(url, location) if location else None


async def _finish(
    response: httpx.Response, requested: str, final: str, chain: list[str], opts: FetchOptions
) -> FetchResult:
    if not 200 <= response.status_code < 300:
        raise FetchHTTPError(final, response.status_code)
    body = await _read_capped(response, final, opts.max_bytes)
    declared, charset = _parse_content_type(response.headers.get("content-type", ""))
    sniffed = sniff_content_type(body)
    return FetchResult(
        requested_url=requested,
        final_url=final,
        redirect_chain=tuple(chain),
        status=response.status_code,
        headers={k: response.headers[k] for k in KEPT_HEADERS if k in response.headers},
        declared_content_type=declared,
        sniffed_content_type=sniffed,
        content_type=effective_content_type(declared, sniffed),
        charset=charset,
        body=body,
        sha256=hashlib.sha256(body).hexdigest(),
    )
