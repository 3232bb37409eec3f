"""Stage checkpoints: the only writer of StageCheckpoint rows.

A checkpoint is opened (or resumed) when a stage starts, records the stage's cursor,
progress, counters and notes as it works, and is closed done, failed or skipped.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from research.models import Run, StageCheckpoint, StageStatus
from research.providers.usage import Cost


def do_open_checkpoint(run: Run, round_no: int) -> StageCheckpoint:
    """The checkpoint of the run's current state and round, marked running (once more)."""
    cp, _ = StageCheckpoint.objects.get_or_create(run=run, stage=run.state, round=round_no)
    cp.attempts += 1
    cp.status = StageStatus.RUNNING
    cp.started_at = cp.started_at or timezone.now()
    cp.error = ""
    cp.save(update_fields=["attempts", "status", "started_at", "error"])
    return cp


def do_close_checkpoint(cp: StageCheckpoint, status: str, error: str = "") -> None:
    """Close with a final status (and error), recording the stage's wall time."""
    cp.status = status
    cp.error = error
    cp.finished_at = timezone.now()
    wall_s = (cp.finished_at - cp.started_at).total_seconds() if cp.started_at else 0.0
    cp.counters = {**cp.counters, "wall_s": round(wall_s, 3)}
    cp.save(update_fields=["status", "error", "finished_at", "counters"])


def do_add_cost(cp: StageCheckpoint, spent: Cost) -> None:
    """Add one attempt's seconds and model use to the stage's ``cost`` counter (summed
    over every attempt, a failed or retried one included)."""
    cost = Cost.from_json(cp.counters.get("cost")).plus(spent)
    cp.counters = {**cp.counters, "cost": cost.to_json()}
    cp.save(update_fields=["counters"])


def do_retry_checkpoint(cp: StageCheckpoint, error: str) -> None:
    """Back to pending with the reason: the stage runs again later."""
    cp.status = StageStatus.PENDING
    cp.error = error
    cp.save(update_fields=["status", "error"])


def do_skip_checkpoint(run: Run, stage: str, round_no: int, why: str) -> None:
    """A stage the run passed over (e.g. out of wall time), recorded as skipped."""
    StageCheckpoint.objects.update_or_create(
        run=run,
        stage=stage,
        round=round_no,
        defaults={"status": StageStatus.SKIPPED, "notes": {"skipped": why}},
    )


def do_reset_checkpoint(run: Run, stage: str, round_no: int, cursor: dict[str, Any]) -> None:
    """A stage asked to run afresh (a new report version): pending, empty, with ``cursor``.

    Only its ``cost`` is kept: what the run spent on earlier builds stays counted.
    """
    before = StageCheckpoint.objects.filter(run=run, stage=stage, round=round_no).first()
    cost = before.counters.get("cost") if before else None
    StageCheckpoint.objects.update_or_create(
        run=run,
        stage=stage,
        round=round_no,
        defaults={
            "status": StageStatus.PENDING,
            "attempts": 0,
            "done": 0,
            "total": 0,
            "counters": {"cost": cost} if cost else {},
            "notes": {},
            "cursor": cursor,
            "error": "",
            "started_at": None,
            "finished_at": None,
        },
    )


def do_save_cursor(
    cp: StageCheckpoint, cursor: dict[str, Any], done: int | None, total: int | None
) -> None:
    """Merge keys into where a resume picks up, with the progress so far."""
    cp.cursor = {**cp.cursor, **cursor}
    if done is not None:
        cp.done = done
    if total is not None:
        cp.total = total
    cp.save(update_fields=["cursor", "done", "total"])


def do_set_progress(cp: StageCheckpoint, done: int, total: int) -> None:
    cp.done, cp.total = done, total
    cp.save(update_fields=["done", "total"])


def do_set_counters(cp: StageCheckpoint, counters: dict[str, int]) -> None:
    """Set some of the stage's counters (the others keep their values)."""
    cp.counters = {**cp.counters, **counters}
    cp.save(update_fields=["counters"])


def do_add_note(cp: StageCheckpoint, key: str, text: str) -> None:
    """What the stage could not do or decided, in words, under ``key``."""
    cp.notes = {**cp.notes, key: text}
    cp.save(update_fields=["notes"])
