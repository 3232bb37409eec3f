"""The job queue that drives runs: the step task's name and queue, and how to enqueue it.

The task itself (``research.tasks.advance_run``) calls the runner; services enqueue it by
name from here, so no service imports the tasks module (which imports the runner).
"""

from __future__ import annotations

import logging
from typing import Any

from procrastinate.contrib.django import app
from procrastinate.exceptions import AlreadyEnqueued

from research.models import Run

logger = logging.getLogger(__name__)

ADVANCE_TASK = "research.advance_run"
RUN_QUEUE = "runs"


def schedule_step(run: Run) -> None:
    """Enqueue the next step of a run (inside the caller's transaction).

    ``lock`` keeps two steps of one run from running at once; ``queueing_lock`` keeps
    one waiting step per run at most.
    """
    key = f"run:{run.code}"
    options: dict[str, Any] = {"queue": RUN_QUEUE, "lock": key, "queueing_lock": key}
    try:
        app.configure_task(ADVANCE_TASK, **options).defer(run_code=str(run.code))
    except AlreadyEnqueued:
        logger.info("run %s already has a queued step", run.code)
