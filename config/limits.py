"""Request bodies bounded before anything buffers them (ASGI middleware, outermost).

Django's own limits (``DATA_UPLOAD_MAX_MEMORY_SIZE``, the upload form's size check) act
only after the body has been read. This middleware sits in front of Django:

1. A declared ``Content-Length`` over the path's limit is answered ``413`` at once;
   the body is never read (the server closes the connection after the answer).
2. A body without a length (chunked) is counted as it streams in; the moment it
   passes the limit the request is answered ``413`` and the rest is never read.

Upload paths (``/library/uploads/``) get the larger upload limit, but only for a
request whose session cookie names a live session of an active user (looked up before
the body is read): an anonymous client, or one that made up a cookie, gets the small
limit everywhere (the view would send it to the login page anyway).
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


def session_key(scope: Scope, cookie_name: str) -> str:
    """The value of the request's session cookie ('' when it has none)."""
    cookies = (_header(scope, b"cookie") or b"").decode("latin-1")
    for part in cookies.split(";"):
        name, _, value = part.strip().partition("=")
        if name == cookie_name and value:
            return value
    return ""


def _signed_in(key: str) -> bool:
    from django.contrib.sessions.backends.db import SessionStore  # the engine settings use
    from django.db import connections

    from research.consumers import session_user

    try:
        return session_user(SessionStore, key) is not None
    finally:
        connections.close_all()  # this runs outside a request: nothing else would


async def signed_in_session(key: str) -> bool:
    """Whether ``key`` is a live session of an active user (``session_user``: the same
    reading the live-progress sockets make, auth hash included)."""
    from asgiref.sync import sync_to_async

    return await sync_to_async(_signed_in, thread_sensitive=False)(key)


SessionCheck = Callable[[str], Awaitable[bool]]


async def limit_for(
    scope: Scope,
    *,
    default: int,
    upload: int,
    session_cookie: str,
    signed_in: SessionCheck = signed_in_session,
) -> int:
    """The largest body this request may send, by path and whether it is signed in."""
    path = str(scope.get("path", ""))
    if not path.startswith(UPLOAD_PREFIXES):
        return default
    key = session_key(scope, session_cookie)
    return upload if key and await signed_in(key) else default


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
        signed_in: SessionCheck = signed_in_session,
    ) -> None:
        self.app = app
        self.default = default
        self.upload = upload
        self.session_cookie = session_cookie
        self.signed_in = signed_in

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = await limit_for(
            scope,
            default=self.default,
            upload=self.upload,
            session_cookie=self.session_cookie,
            signed_in=self.signed_in,
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
