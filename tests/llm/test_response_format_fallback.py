"""A server without ``json_schema``: the client falls back over real HTTP on 127.0.0.1.

No llama.cpp needed: ``tests.fake_openai`` serves the endpoint, refusing the response
formats each test names with the status a real server uses (400 or 422, no body).
"""

from __future__ import annotations

import pytest

from research.providers.llm import JsonSchema, LLMClient, LLMConfig, LLMError
from research.providers.retry import RetryPolicy
from tests.fake_openai import Seen, fake_openai

SCHEMA = JsonSchema(
    "verdict",
    {
        "type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["supports", "contradicts"]}},
        "required": ["verdict"],
        "additionalProperties": False,
    },
)
ASK = [{"role": "user", "content": "Does the passage support the claim?"}]
QUICK = RetryPolicy(max_attempts=3, backoff_s=0)


def refusing(*kinds: str, status: int = 400):
    """An endpoint that answers ``status`` to the response formats ``kinds``."""

    def answer(seen: Seen) -> dict[str, str] | int:
        kind = seen.body.get("response_format", {}).get("type", "none")
        return status if kind in kinds else {"verdict": "supports"}

    return answer


def formats(requests: list[Seen]) -> list[str]:
    return [seen.body.get("response_format", {}).get("type", "none") for seen in requests]


def client(url: str) -> LLMClient:
    return LLMClient(LLMConfig(url, "no-schema", timeout_s=5, retry=QUICK, max_tokens=64))


def test_it_falls_back_to_json_object_and_remembers_the_refusal():
    with fake_openai(refusing("json_schema")) as fake:
        llm = client(fake.url)
        assert llm.chat_json(ASK, schema=SCHEMA) == {"verdict": "supports"}
        assert llm.chat_json(ASK, schema=SCHEMA) == {"verdict": "supports"}
    assert formats(fake.requests) == ["json_schema", "json_object", "json_object"]
    assert llm.refused == {"json_schema"}
    assert all(seen.body["max_tokens"] == 64 for seen in fake.requests)


def test_it_drops_the_response_format_when_json_object_is_refused_too():
    with fake_openai(refusing("json_schema", "json_object", status=422)) as fake:
        llm = client(fake.url)
        assert llm.chat_json(ASK, schema=SCHEMA) == {"verdict": "supports"}
        assert llm.chat_json(ASK) == {"verdict": "supports"}
    assert formats(fake.requests) == ["json_schema", "json_object", "none", "none"]
    assert llm.refused == {"json_schema", "json_object"}


def test_it_learns_nothing_from_a_request_refused_whatever_its_format():
    with fake_openai(refusing("json_schema", "json_object", "none")) as fake:
        llm = client(fake.url)
        with pytest.raises(LLMError, match="HTTP 400") as refused:
            llm.chat_json(ASK, schema=SCHEMA)
    assert refused.value.permanent
    assert formats(fake.requests) == ["json_schema", "json_object", "none"]  # each once
    assert llm.refused == set()
