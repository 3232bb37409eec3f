"""A live-progress socket opened before logout is closed by it and receives no more pushes."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client

from config.asgi import application
from research.progress import run_group
from tests.factories import make_plan, make_run

pytestmark = pytest.mark.django_db(transaction=True)


def _signed_in(user) -> tuple[Client, bytes]:
    client = Client()
    client.force_login(user)
    value = client.cookies[settings.SESSION_COOKIE_NAME].value
    return client, f"{settings.SESSION_COOKIE_NAME}={value}".encode()


def _communicator(run, cookie: bytes) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1"), (b"cookie", cookie)]
    return WebsocketCommunicator(application, f"/ws/runs/{run.code}/", headers=headers)


async def _messages_after(
    run, cookie: bytes, sign_out, pushes=5
) -> tuple[str, list[dict[str, object]]]:
    """One push while signed in, then ``sign_out`` and ``pushes`` pushes: what arrives?"""
    communicator = _communicator(run, cookie)
    connected, _ = await communicator.connect()
    assert connected
    event = {"type": "research.run_progress", "run": str(run.code)}
    layer = get_channel_layer()
    await layer.group_send(run_group(run.code), event)
    first = await communicator.receive_from(timeout=10)
    await sign_out()
    for _ in range(pushes):
        await layer.group_send(run_group(run.code), event)
    after = [await communicator.receive_output(timeout=10)]
    while not await communicator.receive_nothing(timeout=0.5):
        after.append(await communicator.receive_output(timeout=1))
    await communicator.disconnect()
    return first, after


def test_it_closes_the_socket_when_its_session_logs_out(author):
    run = make_run(make_plan(author), state="searching")
    client, cookie = _signed_in(author)

    @sync_to_async
    def log_out():
        assert client.post("/accounts/logout/").status_code == 302

    first, after = async_to_sync(_messages_after)(run, cookie, log_out)
    assert 'id="run-status"' in first
    assert after[0] == {"type": "websocket.close", "code": 4401}
    assert all(message["type"] != "websocket.send" for message in after)


def test_it_closes_the_socket_at_logout_without_waiting_for_a_push(author):
    run = make_run(make_plan(author), state="searching")
    client, cookie = _signed_in(author)

    @sync_to_async
    def log_out():
        client.post("/accounts/logout/")

    _, after = async_to_sync(_messages_after)(run, cookie, log_out, pushes=0)
    assert after == [{"type": "websocket.close", "code": 4401}]


def test_it_closes_the_socket_of_a_deleted_session_at_the_next_push(author):
    run = make_run(make_plan(author), state="searching")
    _, cookie = _signed_in(author)

    @sync_to_async
    def delete_session():
        Session.objects.all().delete()  # expired, flushed elsewhere, or removed by an admin

    first, after = async_to_sync(_messages_after)(run, cookie, delete_session)
    assert 'id="run-status"' in first
    assert after[0] == {"type": "websocket.close", "code": 4401}
    assert all(message["type"] != "websocket.send" for message in after)


def test_it_keeps_the_other_sessions_of_the_same_user_open(author):
    run = make_run(make_plan(author), state="searching")
    leaving, _ = _signed_in(author)
    _, staying = _signed_in(author)

    @sync_to_async
    def log_out_elsewhere():
        leaving.post("/accounts/logout/")

    first, after = async_to_sync(_messages_after)(run, staying, log_out_elsewhere)
    assert 'id="run-status"' in first
    assert [message["type"] for message in after] == ["websocket.send"] * 5
