"""Run queries against the enabled adapters concurrently; report every failure.

``run_search`` gathers one task per (adapter, query). Each task waits its adapter's
rate limiter before every attempt, bounds each attempt with a hard timeout, and retries
retryable errors through the one HTTP retry policy (``research.providers.retry``:
exponential backoff or the server's Retry-After, up to ``RetryPolicy.max_attempts``).
Whatever happens ends in an ``AdapterOutcome``: records or an error with its class
(permanent / retryable) and the number of attempts. Errors are never swallowed: they
are in ``SearchRunResult.errors`` for the run record.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from asgiref.sync import async_to_sync

from research.providers.retry import RetryPolicy, Sleep, retrying
from research.providers.search.base import SearchAdapter, SearchError, SearchRecord


class RateLimiter:
    """Spaces request starts at least ``interval_s`` apart (shared by all tasks)."""

    def __init__(
        self,
        interval_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.interval_s = interval_s
        self._clock = clock
        self._sleep = sleep
        self._next = float("-inf")
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            pause = self._next - self._clock()
            if pause > 0:
                await self._sleep(pause)
            self._next = max(self._clock(), self._next) + self.interval_s


@dataclass
class AdapterOutcome:
    """What one adapter did with one query."""

    adapter: str
    query: str
    records: list[SearchRecord] = field(default_factory=list)
    attempts: int = 0
    error: str = ""  # the last error, '' on success
    permanent: bool | None = None  # class of the last error; None on success
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "query": self.query,
            "records": len(self.records),
            "attempts": self.attempts,
            "error": self.error,
            "permanent": self.permanent,
            "elapsed_s": round(self.elapsed_s, 3),
        }


@dataclass
class SearchRunResult:
    outcomes: list[AdapterOutcome]

    @property
    def records(self) -> list[SearchRecord]:
        return [record for outcome in self.outcomes for record in outcome.records]

    @property
    def errors(self) -> list[AdapterOutcome]:
        return [outcome for outcome in self.outcomes if not outcome.ok]

    def to_json(self) -> dict[str, Any]:
        return {"outcomes": [outcome.to_json() for outcome in self.outcomes]}


def make_client(transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """The one HTTP client factory for search APIs (tests pass a MockTransport)."""
    from django.conf import settings

    return httpx.AsyncClient(
        transport=transport,
        headers={"User-Agent": settings.FETCH_USER_AGENT, "Accept": "application/json"},
        follow_redirects=True,
        trust_env=False,
    )


def enabled_adapters() -> list[SearchAdapter]:
    """Adapters switched on in settings, in a stable order."""
    from research.providers.search.arxiv import ArxivAdapter
    from research.providers.search.openalex import OpenAlexAdapter
    from research.providers.search.searxng import SearxngAdapter
    from research.providers.search.wikipedia import WikipediaAdapter

    classes: list[type[SearchAdapter]] = [
        SearxngAdapter,
        ArxivAdapter,
        OpenAlexAdapter,
        WikipediaAdapter,
    ]
    return [adapter for cls in classes if (adapter := cls.from_settings()) is not None]


async def run_search(
    queries: Sequence[str],
    adapters: Sequence[SearchAdapter] | None = None,
    *,
    limit: int = 10,
    policy: RetryPolicy | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    sleep: Sleep = asyncio.sleep,
) -> SearchRunResult:
    """Every query through every adapter, concurrently; outcomes in (query, adapter) order."""
    chosen = list(adapters) if adapters is not None else enabled_adapters()
    retry = policy or RetryPolicy.from_settings()
    limiters = {a.name: RateLimiter(a.min_interval_s, sleep=sleep) for a in chosen}
    async with make_client(transport) as client:
        tasks = [
            _run_one(client, adapter, query, limit, retry, limiters[adapter.name], sleep)
            for query in queries
            for adapter in chosen
        ]
        return SearchRunResult(list(await asyncio.gather(*tasks)))


def run_search_sync(
    queries: Sequence[str], adapters: Sequence[SearchAdapter] | None = None, **kwargs: Any
) -> SearchRunResult:
    """``run_search`` for synchronous callers (tasks, commands)."""
    return async_to_sync(run_search)(queries, adapters, **kwargs)


async def _run_one(
    client: httpx.AsyncClient,
    adapter: SearchAdapter,
    query: str,
    limit: int,
    policy: RetryPolicy,
    limiter: RateLimiter,
    sleep: Sleep,
) -> AdapterOutcome:
    outcome = AdapterOutcome(adapter=adapter.name, query=query)
    started = time.monotonic()

    async def attempt(number: int) -> list[SearchRecord]:
        outcome.attempts = number
        await limiter.wait()
        return await _attempt(client, adapter, query, limit)

    try:
        outcome.records = await retrying(attempt, policy, sleep=sleep)
    except SearchError as exc:
        outcome.error, outcome.permanent = str(exc), exc.permanent
    outcome.elapsed_s = time.monotonic() - started
    return outcome


async def _attempt(
    client: httpx.AsyncClient, adapter: SearchAdapter, query: str, limit: int
) -> list[SearchRecord]:
    """One bounded attempt; a bug in an adapter is reported as a permanent error."""
    try:
        async with asyncio.timeout(adapter.timeout_s):
            return await adapter.search(client, query, limit)
    except TimeoutError as exc:
        message = f"timed out after {adapter.timeout_s:g} s"
        raise adapter.error(message, permanent=False) from exc
    except SearchError:
        raise
    except Exception as exc:  # reported in the outcome, never swallowed
        message = f"adapter failed: {type(exc).__name__}: {exc}"
        raise adapter.error(message, permanent=True) from exc
