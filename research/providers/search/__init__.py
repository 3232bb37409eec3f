"""Search adapters behind one interface, run concurrently with limits and retries.

Use ``run_search(queries)`` (async) or ``run_search_sync(queries)``: it runs every
query through every adapter enabled in settings and returns records plus one outcome
per (adapter, query), failures included.
"""

from __future__ import annotations

from research.providers.retry import RetryPolicy
from research.providers.search.base import SearchAdapter, SearchError, SearchRecord
from research.providers.search.runner import (
    AdapterOutcome,
    RateLimiter,
    SearchRunResult,
    enabled_adapters,
    make_client,
    run_search,
    run_search_sync,
)

__all__ = [
    "AdapterOutcome",
    "RateLimiter",
    "RetryPolicy",
    "SearchAdapter",
    "SearchError",
    "SearchRecord",
    "SearchRunResult",
    "enabled_adapters",
    "make_client",
    "run_search",
    "run_search_sync",
]
