"""A fake OpenAI-compatible chat endpoint for the tests of every LLM-backed stage.

One reply shape, two ways in:

* :func:`fake_openai` — a real HTTP server on 127.0.0.1 (what the app's one HTTP
  chokepoint talks to in production), for tests that go through settings and the client's
  own networking;
* :func:`completion` — the body of a reply, for tests that answer through an
  ``httpx.MockTransport`` at that chokepoint.

``answer(request)`` decides each reply: the message content (a dict or list is sent as
JSON), or an ``int``, an HTTP status to fail with and no body. ``usage`` (optional) is
sent with every reply as the body's ``usage`` (``prompt_tokens``, ``completion_tokens``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(content: str | dict[str, Any] | list[Any]) -> dict[str, Any]:
    """An OpenAI chat-completion body whose one message says ``content``."""
    text = content if isinstance(content, str) else json.dumps(content)
    return {"choices": [{"message": {"role": "assistant", "content": text}}]}


@dataclass(frozen=True)
class Seen:
    """One request the fake endpoint received."""

    path: str
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The last message's text: what the stage asked."""
        return str(self.body["messages"][-1]["content"])


Answer = Callable[[Seen], "str | dict[str, Any] | list[Any] | int"]


@dataclass
class FakeOpenAI:
    """A running fake endpoint: its base URL (``…/v1``) and what it was sent, in order."""

    url: str
    requests: list[Seen] = field(default_factory=list)


@contextmanager
def fake_openai(answer: Answer, usage: dict[str, int] | None = None) -> Iterator[FakeOpenAI]:
    """Serve ``answer`` as ``POST /v1/chat/completions`` on a free port of 127.0.0.1."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen = Seen(self.path, body)
            with lock:
                fake.requests.append(seen)
            reply = answer(seen)
            if isinstance(reply, int):
                self.send_response(reply)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = completion(reply) if usage is None else {**completion(reply), "usage": usage}
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake = FakeOpenAI(f"http://127.0.0.1:{server.server_port}/v1")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
