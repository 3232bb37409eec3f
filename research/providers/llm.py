"""OpenAI-compatible chat completions over httpx (Ollama, vLLM, llama.cpp, OpenAI).

Never required: ``LLMClient.from_settings()`` returns None when no endpoint is set, and
callers fall back to their deterministic offline path, saying so in the run record. A
retryable failure (timeout, transport error, 429, 5xx) is tried again through the one
HTTP retry policy (``research.providers.retry``, ``LLMConfig.retry``).

Every call is bounded: it sends ``max_tokens`` (``LLM_MAX_TOKENS``, or less when the
caller asks for less), and a reply the server cut off at that bound is an error, never
half an answer. A caller that gives a :class:`JsonSchema` gets an OpenAI ``json_schema``
response format (llama.cpp and Ollama turn it into a grammar). A server that refuses it
(HTTP 400/422, or an error naming the response format) is asked again with
``json_object``, then with no response format; the client remembers what its server
refused, so later calls start at the first format that worked.

Each call reports its seconds and the server's ``usage`` tokens to the current stage's
cost (``research.providers.usage``, family ``llm``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from research.providers import usage
from research.providers.base import ProviderError
from research.providers.retry import RetryPolicy, retrying_sync

DEFAULT_MAX_TOKENS = 1024
JSON_SCHEMA, JSON_OBJECT, PLAIN = "json_schema", "json_object", "none"
FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format")


class LLMError(ProviderError):
    pass


class FormatRefused(LLMError):
    """The server refused the response format it was asked for (not the request itself)."""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 60.0
    temperature: float = 0.0
    seed: int = 0
    retry: RetryPolicy = RetryPolicy()  # attempts and back-off (HTTP_* settings)
    max_tokens: int = DEFAULT_MAX_TOKENS  # the most any one call may generate


@dataclass(frozen=True)
class JsonSchema:
    """The JSON schema a reply must follow, sent as ``response_format.json_schema``."""

    name: str  # letters, digits, "_" and "-" (OpenAI's rule)
    schema: dict[str, Any]

    def response_format(self) -> dict[str, Any]:
        body = {"name": self.name, "schema": self.schema, "strict": True}
        return {"type": JSON_SCHEMA, "json_schema": body}

    @classmethod
    def one_field(cls, name: str, key: str, value: dict[str, Any]) -> JsonSchema:
        """A reply that is an object with the one required field ``key`` and nothing else."""
        schema = {
            "type": "object",
            "properties": {key: value},
            "required": [key],
            "additionalProperties": False,
        }
        return cls(name, schema)


@dataclass(frozen=True)
class Completion:
    """One reply: its text and what the server says about it."""

    text: str
    finish_reason: str  # "stop", "length" (cut off at max_tokens), … ("" when not sent)
    completion_tokens: int | None  # the server's usage.completion_tokens, when sent
    response_format: str  # what was asked for: json_schema, json_object or none
    max_tokens: int  # the bound that was sent
    prompt_tokens: int | None = None  # the server's usage.prompt_tokens, when sent


class LLMClient:
    def __init__(self, config: LLMConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self.last: Completion | None = None  # the latest reply (tests, benchmarks)
        self.refused: set[str] = set()  # response formats this server does not take
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = httpx.Client(
            base_url=config.base_url.rstrip("/"),
            headers=headers,
            timeout=config.timeout_s,
            transport=transport,
        )

    @classmethod
    def from_settings(cls) -> LLMClient | None:
        from django.conf import settings

        if not settings.LLM_BASE_URL or not settings.LLM_MODEL:
            return None
        return cls.for_endpoint(settings.LLM_BASE_URL, settings.LLM_MODEL)

    @classmethod
    def for_endpoint(cls, base_url: str, model: str) -> LLMClient:
        """A client of ``base_url`` and ``model`` with the other ``LLM_*`` and ``HTTP_*``
        settings (key, timeout, token bound, retry policy)."""
        from django.conf import settings

        return cls(
            LLMConfig(
                base_url=base_url,
                model=model,
                api_key=settings.LLM_API_KEY,
                timeout_s=settings.LLM_TIMEOUT_S,
                retry=RetryPolicy.from_settings(),
                max_tokens=settings.LLM_MAX_TOKENS,
            )
        )

    @property
    def label(self) -> str:
        return f"llm:{self.config.model}@{self.config.base_url}"

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        json_mode: bool = False,
        schema: JsonSchema | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Return the assistant message text; raise LLMError (permanent or not).

        ``schema`` asks for JSON that follows it (and implies ``json_mode``);
        ``max_tokens`` lowers the configured bound for this call, never raises it.
        """
        bound = min(self.config.max_tokens, max_tokens or self.config.max_tokens)
        refused: list[str] = []
        completion: Completion | None = None
        with usage.measure(usage.LLM) as call:  # the run's cost: calls, seconds, tokens
            for kind in self._formats(json_mode or schema is not None, schema):
                try:
                    completion = self._attempt(self._payload(messages, bound, kind, schema))
                    break
                except FormatRefused:
                    refused.append(kind)
            if completion is None:  # every format refused (or none asked for): plain text
                completion = self._attempt(self._payload(messages, bound, PLAIN, None))
            call.tokens(completion.prompt_tokens, completion.completion_tokens)
        self.refused.update(refused)  # a later attempt worked: the refusals were real
        return self._accept(completion)

    def _formats(self, json_mode: bool, schema: JsonSchema | None) -> list[str]:
        """The response formats to try, best first, skipping what this server refused."""
        wanted = [JSON_SCHEMA] if schema is not None else []
        wanted += [JSON_OBJECT] if json_mode else []
        return [f for f in wanted if f not in self.refused]  # then no response format

    def _payload(
        self, messages: list[dict[str, str]], bound: int, kind: str, schema: JsonSchema | None
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "seed": self.config.seed,
            "max_tokens": bound,
        }
        if kind == JSON_SCHEMA and schema is not None:
            payload["response_format"] = schema.response_format()
        elif kind == JSON_OBJECT:
            payload["response_format"] = {"type": JSON_OBJECT}
        return payload

    def _attempt(self, payload: dict[str, Any]) -> Completion:
        """The call, retried through the HTTP policy (a refused format is permanent)."""
        return retrying_sync(lambda _: self._post(payload), self.config.retry)

    def _post(self, payload: dict[str, Any]) -> Completion:
        """One attempt at a chat completion."""
        try:
            response = self._client.post("/chat/completions", json=payload)
        except httpx.TimeoutException as exc:
            raise LLMError(f"timed out: {exc}", permanent=False, provider="llm") from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"transport error: {exc}", permanent=False, provider="llm") from exc
        if "response_format" in payload and _refuses_format(response):
            message = f"HTTP {response.status_code} for response_format: {response.text[:200]}"
            raise FormatRefused(message, permanent=True, provider="llm")
        if response.status_code == 429 or response.status_code >= 500:
            raise LLMError(f"HTTP {response.status_code}", permanent=False, provider="llm")
        if response.status_code >= 400:
            raise LLMError(
                f"HTTP {response.status_code}: {response.text[:200]}",
                permanent=True,
                provider="llm",
            )
        return _completion(response, payload)

    def _accept(self, completion: Completion) -> str:
        """The reply's text, unless the server cut it off at the token bound."""
        self.last = completion
        if completion.finish_reason == "length":
            used = completion.completion_tokens
            raise LLMError(
                f"reply cut off at max_tokens={completion.max_tokens}"
                f" ({used if used is not None else '?'} tokens generated; raise LLM_MAX_TOKENS"
                f" or ask for less): {completion.text[:120]!r}…",
                permanent=True,
                provider="llm",
            )
        return completion.text

    def chat_json(
        self,
        messages: list[dict[str, str]],
        *,
        schema: JsonSchema | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        """Chat and parse the reply as JSON (tolerating a fenced code block)."""
        text = self.chat(messages, json_mode=True, schema=schema, max_tokens=max_tokens).strip()
        if text.startswith("```"):
            text = text.strip("`")
            text = text.split("\n", 1)[1] if "\n" in text else text
        try:
            return json.loads(text)
        except ValueError as exc:
            raise LLMError(
                f"reply is not JSON: {exc}: {text[:120]!r}", permanent=True, provider="llm"
            ) from exc


def _refuses_format(response: httpx.Response) -> bool:
    """A 400/422, or any error whose words name the response format."""
    if response.status_code in (400, 422):
        return True
    if response.status_code < 400:
        return False
    text = response.text.lower()
    return any(word in text for word in FORMAT_WORDS)


def _completion(response: httpx.Response, payload: dict[str, Any]) -> Completion:
    """The reply's first choice and usage, or a permanent LLMError for a malformed body."""
    try:
        body = response.json()
        choice = body["choices"][0]
        text = str(choice["message"]["content"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMError(f"malformed response: {exc}", permanent=True, provider="llm") from exc
    sent = body.get("usage") if isinstance(body, dict) else None
    counts = sent if isinstance(sent, dict) else {}
    kind = payload.get("response_format", {}).get("type", PLAIN)
    return Completion(
        text=text,
        finish_reason=str(choice.get("finish_reason") or ""),
        completion_tokens=_count(counts.get("completion_tokens")),
        response_format=str(kind),
        max_tokens=int(payload["max_tokens"]),
        prompt_tokens=_count(counts.get("prompt_tokens")),
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
