"""Background tasks: thin wrappers that load rows, call the runner, enqueue the next step."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import close_old_connections
from procrastinate import JobContext
from procrastinate.contrib.django import app

from config.procrastinate import TASK_RETRY
from research.queue import ADVANCE_TASK, RUN_QUEUE, schedule_step

logger = logging.getLogger(__name__)


@app.task(name=ADVANCE_TASK, queue=RUN_QUEUE, retry=TASK_RETRY, pass_context=True)
def advance_run(context: JobContext, run_code: str) -> None:
    """Run the current stage of a run once; the runner enqueues the next step itself.

    A failure is retried by the queue (``TASK_RETRY``); the runner hears how many
    attempts came before, so the last one fails the run in words instead.
    """
    # Imported here, not at the top: procrastinate imports every tasks module when
    # Django starts, and the web process needs none of the pipeline (about 1 s here).
    from research import runner

    close_old_connections()
    try:
        runner.step(run_code, schedule=schedule_step, attempt=context.job.attempts)
    finally:
        close_old_connections()


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
