"""What every stage adapter gets: the run, its plan, its checkpoint, and safe points.

A stage adapter loads rows, calls a pure pipeline function, and saves through services
(its checkpoint through ``research.services.checkpoints``).
It calls :meth:`StageContext.safe_point` between units of work (a cancel or an exhausted
wall-time budget stops it there) and :meth:`StageContext.save_cursor` after each unit,
so a stage that a dead worker left half-done resumes where its cursor says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from research.models import Run, StageCheckpoint
from research.pipeline.records import PlanContent
from research.progress import publish_run_progress
from research.services import checkpoints

PUBLISH_EVERY_S = 0.5


class RunCancelled(Exception):
    """The user asked the run to stop; raised at a safe point."""


class WallTimeExhausted(Exception):
    """The run's wall-time budget is spent; collection stops at a safe point."""


class StageFailed(Exception):
    """A stage cannot go on; the message is shown to the user as is."""


@dataclass
class StageContext:
    run: Run
    plan: PlanContent
    checkpoint: StageCheckpoint
    round: int = 0
    _last_publish: float = field(default=0.0, repr=False)

    # --- budgets and safe points ------------------------------------------------------

    @property
    def wall_time_budget_s(self) -> int:
        return int(self.run.budgets.get("wall_time_s", self.plan.budgets.wall_time_s))

    def wall_time_left_s(self) -> float:
        started = self.run.started_at or timezone.now()
        deadline = started + timedelta(seconds=self.wall_time_budget_s)
        return (deadline - timezone.now()).total_seconds()

    def cancel_requested(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT cancel_requested FROM research_run WHERE id = %s", [self.run.pk])
            row = cursor.fetchone()
        return bool(row and row[0])

    def safe_point(self, *, wall_time: bool = True) -> None:
        """Stop here if the user cancelled, or (when ``wall_time``) the budget is spent."""
        if self.cancel_requested():
            raise RunCancelled()
        if wall_time and self.wall_time_left_s() <= 0:
            raise WallTimeExhausted()

    # --- progress and resume ------------------------------------------------------------

    @property
    def cursor(self) -> dict[str, Any]:
        return dict(self.checkpoint.cursor)

    def save_cursor(
        self, *, done: int | None = None, total: int | None = None, **cursor: Any
    ) -> None:
        """Persist where a resume picks up (and progress), then announce it (throttled)."""
        checkpoints.do_save_cursor(self.checkpoint, cursor, done, total)
        self.publish()

    def progress(self, done: int, total: int) -> None:
        checkpoints.do_set_progress(self.checkpoint, done, total)
        self.publish()

    def count(self, **counters: int) -> None:
        """Set this stage's counters (shown on the run page)."""
        checkpoints.do_set_counters(self.checkpoint, counters)
        self.publish()

    def note(self, key: str, text: str) -> None:
        """Say in words what the stage could not do or decided (shown on the run page)."""
        checkpoints.do_add_note(self.checkpoint, key, text)
        self.publish(force=True)

    def publish(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_publish >= PUBLISH_EVERY_S:
            self._last_publish = now
            publish_run_progress(self.run.code)

    def earlier(self, stage: str, round_no: int | None = None) -> StageCheckpoint | None:
        """The checkpoint of an earlier stage of this run (this round by default)."""
        return StageCheckpoint.objects.filter(
            run=self.run, stage=stage, round=self.round if round_no is None else round_no
        ).first()
