"""OpenAI-compatible chat completions over httpx (Ollama, vLLM, llama.cpp, OpenAI).

Never required: ``LLMClient.from_settings()`` returns None when no endpoint is set, and
callers fall back to their deterministic offline path, saying so in the run record. A
retryable failure (timeout, transport error, 429, 5xx) is tried again through the one
HTTP retry policy (``research.providers.retry``, ``LLMConfig.retry``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from research.providers.base import ProviderError
from research.providers.retry import RetryPolicy, retrying_sync


class LLMError(ProviderError):
    pass


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 60.0
    temperature: float = 0.0
    seed: int = 0
    retry: RetryPolicy = RetryPolicy()  # attempts and back-off (HTTP_* settings)


class LLMClient:
    def __init__(self, config: LLMConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
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
        return cls(
            LLMConfig(
                base_url=settings.LLM_BASE_URL,
                model=settings.LLM_MODEL,
                api_key=settings.LLM_API_KEY,
                timeout_s=settings.LLM_TIMEOUT_S,
                retry=RetryPolicy.from_settings(),
            )
        )

    @property
    def label(self) -> str:
        return f"llm:{self.config.model}@{self.config.base_url}"

    def chat(self, messages: list[dict[str, str]], *, json_mode: bool = False) -> str:
        """Return the assistant message text; raise LLMError (permanent or not)."""
        payload: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "seed": self.config.seed,
        }
        if json_mode:
            payload["response_format"] = {"type": "json_object"}
        return retrying_sync(lambda number: self._post(payload), self.config.retry)

    def _post(self, payload: dict[str, Any]) -> str:
        """One attempt at a chat completion."""
        try:
            response = self._client.post("/chat/completions", json=payload)
        except httpx.TimeoutException as exc:
            raise LLMError(f"timed out: {exc}", permanent=False, provider="llm") from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"transport error: {exc}", permanent=False, provider="llm") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise LLMError(f"HTTP {response.status_code}", permanent=False, provider="llm")
        if response.status_code >= 400:
            raise LLMError(
                f"HTTP {response.status_code}: {response.text[:200]}",
                permanent=True,
                provider="llm",
            )
        try:
            return str(response.json()["choices"][0]["message"]["content"])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"malformed response: {exc}", permanent=True, provider="llm") from exc

    def chat_json(self, messages: list[dict[str, str]]) -> Any:
        """Chat and parse the reply as JSON (tolerating a fenced code block)."""
        text = self.chat(messages, json_mode=True).strip()
        if text.startswith("```"):
            text = text.strip("`")
            text = text.split("\n", 1)[1] if "\n" in text else text
        try:
            return json.loads(text)
        except ValueError as exc:
            raise LLMError(f"reply is not JSON: {exc}", permanent=True, provider="llm") from exc
