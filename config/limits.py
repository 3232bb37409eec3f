"""Request bodies bounded before anything buffers them (ASGI middleware, outermost).

Django's own limits (``DATA_UPLOAD_MAX_MEMORY_SIZE``, the upload form's size check) act
only after the body has been read. This middleware sits in front of Django:

1. A declared ``Content-Length`` over the path's limit is answered ``413`` at once;
   the body is never read (the server closes the connection after the answer).
2. A body without a length (chunked) is counted as it streams in; the moment it
   passes the limit the request is answered ``413`` and the rest is never read.

Upload paths (``/library/uploads/``) get the larger upload limit, but only for a
request that carries a session cookie: an anonymous client gets the small limit
everywhere (the view would send it to the login page anyway).
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

Scope = dict[str, Any]
Message = Mapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_PREFIXES = ("/library/uploads/",)


class BodyTooLarge(Exception):
    """Raised inside ``receive`` when a streamed body passes the limit."""


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


def _has_session(scope: Scope, cookie_name: str) -> bool:
    cookies = (_header(scope, b"cookie") or b"").decode("latin-1")
    return any(part.strip().startswith(cookie_name + "=") for part in cookies.split(";"))


def limit_for(scope: Scope, *, default: int, upload: int, session_cookie: str) -> int:
    """The largest body this request may send, by path and whether it has a session."""
    path = str(scope.get("path", ""))
    if path.startswith(UPLOAD_PREFIXES) and _has_session(scope, session_cookie):
        return upload
    return default


async def send_413(send: Send, limit: int) -> None:
    mib = limit / 2**20
    size = f"{mib:.0f} MB" if mib >= 1 else f"{limit // 1024} KB"
    body = (
        "<!doctype html><title>Request too large</title>"
        "<h1>Request too large</h1>"
        f"<p>This request is larger than the {html.escape(size)} this address accepts; "
        "nothing was stored. Send fewer or smaller files.</p>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestSizeLimit:
    """Wrap an ASGI app so no HTTP request body over its limit reaches it."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        default: int,
        upload: int,
        session_cookie: str = "sessionid",
    ) -> None:
        self.app = app
        self.default = default
        self.upload = upload
        self.session_cookie = session_cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = limit_for(
            scope, default=self.default, upload=self.upload, session_cookie=self.session_cookie
        )
        declared = _header(scope, b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > limit
            except ValueError:
                too_big = True  # a malformed length is refused like an oversized one
            if too_big:
                await send_413(send, limit)
                return
        await self._streamed(scope, receive, send, limit)

    async def _streamed(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await send_413(send, limit)
