"""The one HTTP retry policy: retryable errors tried again with back-off, the attempts told."""

from __future__ import annotations

import asyncio

import pytest

from research.providers.base import ProviderError
from research.providers.retry import RetryPolicy, retrying, retrying_sync

POLICY = RetryPolicy(max_attempts=3, backoff_s=0.5, max_backoff_s=1.5)


class Script:
    """Fails with the given errors in order, then returns 'ok'; records each attempt."""

    def __init__(self, *errors: ProviderError) -> None:
        self.errors = list(errors)
        self.numbers: list[int] = []

    def __call__(self, number: int) -> str:
        self.numbers.append(number)
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def _retryable(message: str = "HTTP 503") -> ProviderError:
    return ProviderError(message, permanent=False, provider="api")


def _run_async(script: Script, policy: RetryPolicy = POLICY) -> tuple[str, list[float]]:
    sleeps: list[float] = []

    async def attempt(number: int) -> str:
        return script(number)

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return asyncio.run(retrying(attempt, policy, sleep=sleep)), sleeps


def test_it_tries_a_retryable_failure_again_after_a_doubling_wait():
    script = Script(_retryable(), _retryable())
    assert _run_async(script) == ("ok", [0.5, 1.0])
    assert script.numbers == [1, 2, 3]


def test_it_gives_up_after_the_last_attempt_and_says_how_many_were_made():
    script = Script(_retryable(), _retryable(), _retryable("connection refused"))
    with pytest.raises(ProviderError) as failed:
        _run_async(script)
    assert failed.value.attempts == 3
    assert str(failed.value) == ("api: connection refused (retryable); gave up after 3 attempts")


def test_it_never_repeats_a_permanent_failure():
    script = Script(ProviderError("HTTP 404", permanent=True, provider="api"))
    with pytest.raises(ProviderError) as failed:
        _run_async(script)
    assert script.numbers == [1]
    assert str(failed.value) == "api: HTTP 404 (permanent)"


def test_it_waits_what_the_server_asked_for_within_the_cap():
    slow_down = _retryable("HTTP 429")
    slow_down.retry_after = 9.0  # type: ignore[attr-defined]
    polite = _retryable("HTTP 429")
    polite.retry_after = 0.2  # type: ignore[attr-defined]
    assert _run_async(Script(slow_down, polite)) == ("ok", [1.5, 0.2])


def test_it_retries_synchronous_calls_with_the_same_policy():
    sleeps: list[float] = []
    script = Script(_retryable())
    assert retrying_sync(script, POLICY, sleep=sleeps.append) == "ok"
    assert sleeps == [0.5] and script.numbers == [1, 2]


def test_it_reads_the_policy_from_settings(settings):
    settings.HTTP_MAX_ATTEMPTS = 5
    settings.HTTP_BACKOFF_S = 0.25
    assert RetryPolicy.from_settings() == RetryPolicy(max_attempts=5, backoff_s=0.25)
