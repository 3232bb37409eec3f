"""The procrastinate app (Django contrib wires it to the default database) and the one retry
policy of every task.

A task that raises is run again by the queue as :data:`TASK_RETRY` says: after 5, 25 and
125 s, four runs in all. That covers what fails outside the work itself (a lost database
connection, a worker killed mid-job and given back by ``retry_stalled_jobs``) and what a
stage hands to the queue on purpose: the runner turns a stage's retryable provider error
into :class:`research.runner.StageRetry` after recording the attempt on the run, and on
the last attempt fails the run in words instead (it asks :meth:`TaskRetry.delay_s`).
``manage.py runplan`` steps a run without the queue and waits the same delays.

HTTP calls to outside services have their own single policy, below the tasks:
``research.providers.retry``.
"""

from __future__ import annotations

from typing import Any

from procrastinate import BaseRetryStrategy, RetryDecision
from procrastinate.jobs import Job


class TaskRetry(BaseRetryStrategy):
    """Retry any failure of a task after an exponentially growing wait, a bounded number of
    times. ``delay_s`` is the one formula, used by the queue and by the runner."""

    def __init__(self, *, max_retries: int, first_wait_s: int, factor: int) -> None:
        self.max_retries = max_retries
        self.first_wait_s = first_wait_s
        self.factor = factor

    def delay_s(self, attempts: int) -> int | None:
        """Seconds until the next run of a job that failed after ``attempts`` earlier
        attempts (0 on its first run); None when no run follows."""
        if attempts >= self.max_retries:
            return None
        return int(self.first_wait_s * self.factor**attempts)

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        delay = self.delay_s(job.attempts)
        return None if delay is None else RetryDecision(retry_in={"seconds": delay})


TASK_RETRY = TaskRetry(max_retries=3, first_wait_s=5, factor=5)


def on_app_ready(app: Any) -> None:
    """Hook for app-wide task defaults; tasks live in each app's tasks.py."""
    return None
