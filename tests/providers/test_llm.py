"""The LLM client: one OpenAI-compatible call, retried through the one HTTP policy."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from research.providers.llm import JsonSchema, LLMClient, LLMConfig, LLMError
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


def _recording(reply: dict[str, Any]) -> tuple[LLMClient, list[dict[str, Any]]]:
    """A client whose endpoint always sends ``reply``; the request bodies it got."""
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=reply)

    config = LLMConfig(base_url="http://llm.test/v1", model="tiny", retry=QUICK, max_tokens=200)
    return LLMClient(config, transport=httpx.MockTransport(handler)), bodies


def test_it_sends_its_token_bound_and_lets_a_caller_ask_for_less_never_more():
    client, bodies = _recording(completion("Hello."))
    client.chat([{"role": "user", "content": "Hi"}])
    client.chat([{"role": "user", "content": "Hi"}], max_tokens=50)
    client.chat([{"role": "user", "content": "Hi"}], max_tokens=5000)
    assert [b["max_tokens"] for b in bodies] == [200, 50, 200]
    assert "response_format" not in bodies[0]


def test_it_refuses_a_reply_cut_off_at_the_bound_and_says_so():
    cut = completion('{"votes": [{"evidence_id": "e1", "verd')
    cut["choices"][0]["finish_reason"] = "length"
    cut["usage"] = {"completion_tokens": 200}
    client, _ = _recording(cut)
    with pytest.raises(LLMError, match=r"reply cut off at max_tokens=200 \(200 tokens") as error:
        client.chat_json([{"role": "user", "content": "Hi"}])
    assert error.value.permanent
    assert client.last is not None and client.last.completion_tokens == 200


def test_it_falls_back_at_once_when_an_error_names_the_response_format():
    calls: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        calls.append(body)
        if body.get("response_format", {}).get("type") == "json_schema":
            return httpx.Response(500, text='{"error": "response_format json_schema unsupported"}')
        return httpx.Response(200, json=completion({"ok": True}))

    config = LLMConfig(base_url="http://llm.test/v1", model="tiny", retry=QUICK)
    client = LLMClient(config, transport=httpx.MockTransport(handler))
    schema = JsonSchema("ok", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    assert client.chat_json([{"role": "user", "content": "Hi"}], schema=schema) == {"ok": True}
    kinds = [c["response_format"]["type"] for c in calls]
    assert kinds == ["json_schema", "json_object"]  # the refusal is not retried as a 5xx
    assert calls[0]["response_format"]["json_schema"] == {
        "name": "ok",
        "schema": schema.schema,
        "strict": True,
    }


def test_it_reads_the_token_bound_from_settings_for_every_endpoint(settings):
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://llm.test/v1", "tiny"
    settings.LLM_MAX_TOKENS = 300
    client = LLMClient.from_settings()
    assert client is not None and client.config.max_tokens == 300
    judge = LLMClient.for_endpoint("http://judge.test/v1", "other")
    assert (judge.config.max_tokens, judge.config.model) == (300, "other")
