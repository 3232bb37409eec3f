"""Background tasks: thin wrappers that load rows, call services, enqueue the next step."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection
from procrastinate import RetryStrategy
from procrastinate.contrib.django import app
from procrastinate.exceptions import AlreadyEnqueued

from research.models import Run

logger = logging.getLogger(__name__)
RUN_QUEUE = "runs"


@app.task(name="research.count_on_run", queue="default")
def count_on_run(run_code: str, key: str) -> None:
    """Atomically add one to ``run.counters[key]``.

    The smallest real task: it proves a job reached a worker and ran exactly once
    (a job run twice would leave 2).
    """
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE research_run
               SET counters = counters || jsonb_build_object(
                       %s::text, COALESCE((counters ->> %s)::int, 0) + 1)
             WHERE code = %s
            """,
            [key, key, run_code],
        )


@app.task(
    name="research.advance_run",
    queue=RUN_QUEUE,
    # Infrastructure failures (a lost connection) only; stage errors are handled by the runner.
    retry=RetryStrategy(max_attempts=5, wait=10),
)
def advance_run(run_code: str) -> None:
    """Run the current stage of a run once; the runner enqueues the next step itself."""
    from research import runner

    close_old_connections()
    try:
        runner.step(run_code, schedule=defer_advance)
    finally:
        close_old_connections()


def defer_advance(run: Run, delay_s: int = 0) -> None:
    """Enqueue the next step of a run (inside the caller's transaction).

    ``lock`` keeps two steps of one run from running at once; ``queueing_lock`` keeps
    one waiting step per run at most.
    """
    key = f"run:{run.code}"
    options: dict[str, Any] = {"lock": key, "queueing_lock": key}
    if delay_s:
        options["schedule_in"] = {"seconds": delay_s}
    try:
        advance_run.configure(**options).defer(run_code=str(run.code))
    except AlreadyEnqueued:
        logger.info("run %s already has a queued step", run.code)


def stalled_after_s() -> float:
    return float(getattr(settings, "WORKER_STALLED_AFTER_S", 30))


@app.periodic(cron="* * * * * */10")
@app.task(name="research.retry_stalled_jobs", queue=RUN_QUEUE, queueing_lock="retry_stalled")
async def retry_stalled_jobs(timestamp: int) -> None:
    """Give the jobs of dead workers (no heartbeat) back to the queue.

    A worker killed mid-stage leaves its job ``doing``; once its heartbeat is older
    than ``WORKER_STALLED_AFTER_S`` the job is retried, and the runner resumes the
    stage from its checkpoint.
    """
    manager = app.job_manager
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=stalled_after_s()):
        logger.warning("retrying stalled job %s (%s)", job.id, job.task_name)
        await manager.retry_job(job)
