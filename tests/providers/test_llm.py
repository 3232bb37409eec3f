"""The LLM client: one OpenAI-compatible call, retried through the one HTTP policy."""

from __future__ import annotations

import httpx
import pytest

from research.providers.llm import LLMClient, LLMConfig, LLMError
from research.providers.retry import RetryPolicy
from tests.fake_openai import completion

QUICK = RetryPolicy(max_attempts=3, backoff_s=0)


def _client(*statuses: int) -> tuple[LLMClient, list[httpx.Request]]:
    """A client whose endpoint answers ``statuses`` in order, then a reply."""
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) <= len(statuses):
            return httpx.Response(statuses[len(calls) - 1], text="no")
        return httpx.Response(200, json=completion("Hello."))

    config = LLMConfig(base_url="http://llm.test/v1", model="tiny", retry=QUICK)
    return LLMClient(config, transport=httpx.MockTransport(handler)), calls


def test_it_answers_after_a_busy_server_recovers():
    client, calls = _client(503, 429)
    assert client.chat([{"role": "user", "content": "Hi"}]) == "Hello."
    assert len(calls) == 3


def test_it_gives_up_after_the_policys_attempts():
    client, calls = _client(503, 503, 503)
    with pytest.raises(LLMError, match="gave up after 3 attempts"):
        client.chat([{"role": "user", "content": "Hi"}])
    assert len(calls) == 3


def test_it_never_repeats_a_refused_request():
    client, calls = _client(401)
    with pytest.raises(LLMError) as refused:
        client.chat([{"role": "user", "content": "Hi"}])
    assert refused.value.permanent and len(calls) == 1


def test_it_reads_the_retry_policy_from_settings(settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://llm.test/v1", "tiny"
    settings.HTTP_MAX_ATTEMPTS = 4
    client = LLMClient.from_settings()
    assert client is not None and client.config.retry.max_attempts == 4
