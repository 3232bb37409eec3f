"""Push-only websocket: a run's status partial, re-rendered on each progress event.

Membership is checked at connect and again before every push: a member removed from
the plan (or a user whose account was deactivated) is disconnected at the next event
instead of receiving it.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth.models import User
from django.template.loader import render_to_string

from research.models import Run
from research.progress import run_group


def run_visible_to(user: Any, code: str) -> bool:
    run = Run.objects.select_related("plan_version__plan").filter(code=code).first()
    return run is not None and run.plan_version.plan.is_visible_to(user)


class RunProgressConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        user = self.scope.get("user")
        code = self.scope["url_route"]["kwargs"]["code"]
        if user is None or not user.is_authenticated or not await self._visible(user, code):
            await self.close(code=4403)
            return
        self.user_id = user.pk
        self.group = run_group(code)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, close_code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def research_run_progress(self, event: dict[str, Any]) -> None:
        if not await self._still_visible(event["run"]):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            await self.close(code=4403)
            return
        html = await self._render(event["run"])
        if html:
            await self.send(text_data=html)

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _visible(self, user: Any, code: str) -> bool:
        return run_visible_to(user, code)

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _still_visible(self, code: str) -> bool:
        """Re-read the user (still active?) and the plan's members for this push."""
        user = User.objects.filter(pk=self.user_id, is_active=True).first()
        return user is not None and run_visible_to(user, code)

    @database_sync_to_async  # type: ignore[untyped-decorator]
    def _render(self, code: str) -> str:
        run = Run.objects.filter(code=code).first()
        if run is None:
            return ""
        return render_to_string(
            "research/run_detail.html#run-status",
            {"run": run, "checkpoints": run.checkpoints.all(), "oob": True},
        )
