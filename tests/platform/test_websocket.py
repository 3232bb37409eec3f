"""A run's progress reaches a logged-in browser through the project's ASGI app."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from config.asgi import application
from research.progress import run_group
from tests.factories import make_plan, make_run

pytestmark = pytest.mark.django_db(transaction=True)


def _session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    value = client.cookies[settings.SESSION_COOKIE_NAME].value
    return f"{settings.SESSION_COOKIE_NAME}={value}".encode()


def _communicator(run, cookie: bytes | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if cookie:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, f"/ws/runs/{run.code}/", headers=headers)


async def _receive_progress(run, cookie: bytes):
    communicator = _communicator(run, cookie)
    connected, _ = await communicator.connect()
    assert connected
    await get_channel_layer().group_send(
        run_group(run.code), {"type": "research.run_progress", "run": str(run.code)}
    )
    html = await communicator.receive_from(timeout=10)
    await communicator.disconnect()
    return html


async def _connects(run, cookie: bytes | None):
    communicator = _communicator(run, cookie)
    connected, _ = await communicator.connect()
    if connected:
        await communicator.disconnect()
    return connected


def test_it_pushes_the_rendered_run_status_to_a_member(author):
    run = make_run(make_plan(author), state="searching")
    html = async_to_sync(_receive_progress)(run, _session_cookie(author))
    assert 'id="run-status"' in html and 'hx-swap-oob="true"' in html
    assert "Searching" in html


def test_it_refuses_anonymous_and_outsiders(author, outsider):
    run = make_run(make_plan(author))
    assert not async_to_sync(_connects)(run, None)
    assert not async_to_sync(_connects)(run, _session_cookie(outsider))


async def _pushes_after_removal(run, cookie: bytes, remove) -> tuple[str, list[str]]:
    """One push while a member, then the member is removed: what arrives next?"""
    communicator = _communicator(run, cookie)
    connected, _ = await communicator.connect()
    assert connected
    event = {"type": "research.run_progress", "run": str(run.code)}
    layer = get_channel_layer()
    await layer.group_send(run_group(run.code), event)
    first = await communicator.receive_from(timeout=10)
    await remove()
    for _ in range(5):
        await layer.group_send(run_group(run.code), event)
    after = [await communicator.receive_output(timeout=10)]
    while not await communicator.receive_nothing(timeout=0.5):
        after.append(await communicator.receive_output(timeout=1))
    await communicator.disconnect()
    return first, [message["type"] for message in after]


def test_it_stops_pushing_to_a_member_removed_from_the_plan(author, reviewer):
    from channels.db import database_sync_to_async

    plan = make_plan(author, members=(reviewer,))
    run = make_run(plan, state="searching")

    @database_sync_to_async
    def remove():
        plan.members.remove(reviewer)

    first, after = async_to_sync(_pushes_after_removal)(run, _session_cookie(reviewer), remove)
    assert 'id="run-status"' in first
    assert after[0] == "websocket.close"  # closed at the next event
    assert "websocket.send" not in after  # none of the five pushes arrived
