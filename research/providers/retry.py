"""The one retry policy for HTTP calls to outside services: search APIs, page fetches, LLMs.

A provider makes exactly one attempt per call and raises a ``ProviderError`` whose
``permanent`` flag says whether trying again can help. :func:`retrying` (async) and
:func:`retrying_sync` make up to ``RetryPolicy.max_attempts`` attempts: after a
retryable failure they wait ``backoff_s`` (doubled after each further failure, or the
server's ``Retry-After`` when it sent one, at most ``max_backoff_s``); a permanent
failure ends the calls at once. The number of attempts made is kept on the error
(``ProviderError.attempts``) and in its words ("gave up after 3 attempts"), so the
run record and the run page show it.

Tasks have one policy of their own, the queue's: ``config.procrastinate.TASK_RETRY``.
Nothing else in the code retries.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from research.providers.base import ProviderError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently one HTTP call is tried."""

    max_attempts: int = 3
    backoff_s: float = 1.0  # the wait after the first failure; doubles after each next one
    max_backoff_s: float = 30.0

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        """``HTTP_MAX_ATTEMPTS`` and ``HTTP_BACKOFF_S``, read at call time."""
        from django.conf import settings

        return cls(
            max_attempts=int(getattr(settings, "HTTP_MAX_ATTEMPTS", 3)),
            backoff_s=float(getattr(settings, "HTTP_BACKOFF_S", 1.0)),
        )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        wanted = retry_after if retry_after is not None else self.backoff_s * 2 ** (attempt - 1)
        return min(wanted, self.max_backoff_s)

    def wait_after(self, error: ProviderError, attempt: int) -> float | None:
        """The wait before the next attempt, or None when ``error`` ends the calls.

        Records on the error how many attempts were made.
        """
        error.attempts = attempt
        if error.permanent or attempt >= self.max_attempts:
            return None
        return self.delay(attempt, getattr(error, "retry_after", None))


ONE_ATTEMPT = RetryPolicy(max_attempts=1)


async def retrying(
    attempt: Callable[[int], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
) -> T:
    """``await attempt(n)`` for n = 1, 2, … until it returns or the policy gives up."""
    number = 1
    while True:
        try:
            return await attempt(number)
        except ProviderError as exc:
            wait = policy.wait_after(exc, number)
            if wait is None:
                raise
        await sleep(wait)
        number += 1


def retrying_sync(
    attempt: Callable[[int], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """:func:`retrying` for synchronous calls (the LLM client)."""
    number = 1
    while True:
        try:
            return attempt(number)
        except ProviderError as exc:
            wait = policy.wait_after(exc, number)
            if wait is None:
                raise
        sleep(wait)
        number += 1
