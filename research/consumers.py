"""Push-only websocket: a run's status partial, re-rendered on each progress event.

Membership is checked at connect and again before every push: a member removed from
the plan (or a user whose account was deactivated) is disconnected at the next event
instead of receiving it. So is a socket whose login session ended: logout sends
``research.session_closed`` to the session's group (``research.progress``), which
closes its sockets at once, and each push re-reads the session from the session store,
so a session deleted, expired or invalidated by a password change closes at the next
event even where no logout was announced.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.base import SessionBase
from django.template.loader import render_to_string
from django.utils.crypto import constant_time_compare

from research.models import Run
from research.progress import run_group, session_group

CLOSE_FORBIDDEN = 4403  # not (or no longer) allowed to see the run
CLOSE_SIGNED_OUT = 4401  # the socket's login session ended


def run_visible_to(user: Any, code: str) -> bool:
    run = Run.objects.select_related("plan_version__plan").filter(code=code).first()
    return run is not None and run.plan_version.plan.is_visible_to(user)


def session_user(store_class: type[SessionBase], session_key: str) -> User | None:
    """The active user a session is signed in as now, read afresh from its store.

    None once the session was logged out, flushed, deleted or expired, or when its
    auth hash no longer matches the user's (a password change signs other sessions out).
    """
    store = store_class(session_key)  # a new read, not the copy cached at connect
    user_id = store.get(SESSION_KEY)
    user = User.objects.filter(pk=user_id, is_active=True).first() if user_id else None
    if user is None:
        return None
    stored = str(store.get(HASH_SESSION_KEY) or "")
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    return user if any(constant_time_compare(stored, h) for h in hashes) else None


class RunProgressConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        user = self.scope.get("user")
        session = self.scope.get("session")
        code = self.scope["url_route"]["kwargs"]["code"]
        key = session.session_key if session is not None else None
        if not (user and user.is_authenticated and key) or not await self._visible(user, code):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.user_id = user.pk
        self.session_key = key
        self.session_store = session.__class__  # the scope's is lazy: its class is the store's
        self.groups_joined = [run_group(code), session_group(key)]
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()

    async def disconnect(self, close_code: int) -> None:
        for group in getattr(self, "groups_joined", ()):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def research_run_progress(self, event: dict[str, Any]) -> None:
        reason = await self._refusal(event["run"])
        if reason:
            await self._leave(reason)
            return
        html = await self._render(event["run"])
        if html:
            await self.send(text_data=html)

    async def research_session_closed(self, event: dict[str, Any]) -> None:
        await self._leave(CLOSE_SIGNED_OUT)

    async def _leave(self, code: int) -> None:
        await self.disconnect(code)
        self.groups_joined = []
        await self.close(code=code)

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _visible(self, user: Any, code: str) -> bool:
        return run_visible_to(user, code)

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _refusal(self, code: str) -> int | None:
        """Why this push must not reach the socket (a close code), or None.

        Re-reads the session (still signed in as the same active user?) and the plan's
        members for every push.
        """
        user = session_user(self.session_store, self.session_key)
        if user is None or user.pk != self.user_id:
            return CLOSE_SIGNED_OUT
        return None if run_visible_to(user, code) else CLOSE_FORBIDDEN

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _render(self, code: str) -> str:
        run = Run.objects.filter(code=code).first()
        if run is None:
            return ""
        return render_to_string(
            "research/run_detail.html#run-status",
            {"run": run, "checkpoints": run.checkpoints.all(), "oob": True},
        )
