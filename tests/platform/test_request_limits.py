"""Request bodies over the limit are refused with 413 before anything buffers them."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from config.limits import RequestSizeLimit
from tests.processes import free_port, start_web, stop

MB = 1024 * 1024


def _run_app(limit_app: RequestSizeLimit, scope: dict[str, Any], chunks: list[bytes]):
    """Drive the middleware like a server: feed ``chunks``, collect what it sends."""
    sent: list[Any] = []
    fed = 0

    async def receive():
        nonlocal fed
        if fed < len(chunks):
            fed += 1
            return {"type": "http.request", "body": chunks[fed - 1], "more_body": fed < len(chunks)}
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(limit_app(scope, receive, send))
    return sent, fed


def _scope(path: str = "/accounts/login/", headers: list[Any] | None = None) -> dict[str, Any]:
    return {"type": "http", "method": "POST", "path": path, "headers": headers or []}


async def _reading_app(scope, receive, send):
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def test_it_answers_413_to_a_declared_length_over_the_limit_without_reading_the_body():
    app = RequestSizeLimit(_reading_app, default=1000, upload=10_000)
    sent, fed = _run_app(app, _scope(headers=[(b"content-length", b"200000000")]), [b"x"] * 5)
    assert sent[0]["status"] == 413 and fed == 0
    assert b"Request too large" in sent[1]["body"]


def test_it_stops_a_streamed_body_the_moment_it_passes_the_limit():
    app = RequestSizeLimit(_reading_app, default=1000, upload=10_000)
    sent, fed = _run_app(app, _scope(), [b"x" * 400] * 100)
    assert sent[0]["status"] == 413
    assert fed == 3  # 1,200 bytes read: the rest of the 40,000 never was


async def _only_abc(key: str) -> bool:
    return key == "abc"


def test_it_gives_uploads_the_larger_limit_only_with_a_live_session():
    app = RequestSizeLimit(_reading_app, default=1000, upload=10_000, signed_in=_only_abc)
    body = [b"x" * 5000]
    anonymous, _ = _run_app(app, _scope("/library/uploads/"), body)
    cookie = [(b"cookie", b"csrftoken=a; sessionid=abc")]
    signed_in, _ = _run_app(app, _scope("/library/uploads/", cookie), body)
    elsewhere, _ = _run_app(app, _scope("/plans/new/", cookie), body)
    made_up = [(b"cookie", b"sessionid=forged")]
    forged, fed = _run_app(app, _scope("/library/uploads/", made_up), body)
    assert [anonymous[0]["status"], signed_in[0]["status"], elsewhere[0]["status"]] == [
        413,
        200,
        413,
    ]
    assert forged[0]["status"] == 413


@pytest.mark.django_db(transaction=True)
def test_a_made_up_session_cookie_does_not_lift_the_upload_limit(client, author):
    """Any cookie named sessionid used to lift the 1 MB anonymous limit (99 MiB were read
    before the view's 403); only a session the database holds, of an active user, does."""
    app = RequestSizeLimit(_reading_app, default=1000, upload=10_000)
    body = [b"x" * 5000]

    def status(cookie: bytes) -> int:
        sent, _ = _run_app(app, _scope("/library/uploads/", [(b"cookie", cookie)]), body)
        return int(sent[0]["status"])

    client.force_login(author)
    live = client.cookies["sessionid"].value
    assert status(b"sessionid=" + live.encode()) == 200
    assert status(b"sessionid=abcdefghijklmnopqrstuvwxyz012345") == 413
    assert status(b"sessionid=") == 413
    author.is_active = False
    author.save()
    assert status(b"sessionid=" + live.encode()) == 413


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _post(port: int, headers: str, body_chunks: int, chunk: bytes) -> bytes:
    """A raw POST: headers, then up to ``body_chunks`` chunks until the server hangs up."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(headers.encode("latin-1"))
        try:
            for _ in range(body_chunks):
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while data := sock.recv(65536):
                answer += data
        except ConnectionResetError:
            pass
        return answer


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_it_refuses_an_anonymous_200_mb_post_without_the_server_growing():
    port = free_port()
    server = start_web(port, processes=1)
    try:
        before = _rss_kib(server.pid)
        declared = (
            "POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {200 * MB}\r\n\r\n"
        )
        answer = _post(port, declared, 200, b"a" * MB)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        chunked = (
            "POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        piece = b"%x\r\n" % MB + b"a" * MB + b"\r\n"
        answer = _post(port, chunked, 200, piece)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        time.sleep(0.5)
        grown_mib = (_rss_kib(server.pid) - before) / 1024
        assert grown_mib < 50, f"the server grew by {grown_mib:.0f} MiB"
    finally:
        stop(server)
