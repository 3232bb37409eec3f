"""The one task retry policy, through the real queue: a stage's retryable failure is run
again by procrastinate after TASK_RETRY's wait, and the attempt stays on the run record."""

from __future__ import annotations

import time

import pytest
from django.db import connection

from config.procrastinate import TASK_RETRY
from research import services
from research.models import Run, StageCheckpoint
from research.pipeline.records import parse_plan
from research.queue import ADVANCE_TASK
from research.tasks import advance_run
from tests.research.fixtures import ingest_fixture_library
from tests.research.processes import finish, spawn

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PLAN = {
    "question": "Does vitamin D supplementation reduce fractures in older adults?",
    "budgets": {"rounds": 0},
    "subquestions": [
        {
            "key": "s1",
            "text": "Does vitamin D supplementation reduce hip fractures?",
            "queries": [
                {
                    "key": "s1q1",
                    "text": "vitamin D supplementation hip fracture trial",
                    "query_class": "benchmark",
                    "source_classes": ["library"],
                }
            ],
        }
    ],
}


def test_it_gives_every_task_the_one_policy():
    from ledger.tasks import ingest_uploads

    assert advance_run.retry_strategy is TASK_RETRY
    assert ingest_uploads.retry_strategy is TASK_RETRY
    assert [TASK_RETRY.delay_s(n) for n in range(5)] == [5, 25, 125, None, None]


def _searched(run: Run, timeout_s: float, worker) -> StageCheckpoint:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        cp = StageCheckpoint.objects.filter(run=run, stage="searching", round=0).first()
        if cp is not None and cp.status == "done":
            return cp
        assert worker.poll() is None, "the worker exited"
        time.sleep(0.3)
    raise AssertionError("the search stage was not done in time")


def _step_jobs(run: Run) -> list[tuple[int, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attempts, status FROM procrastinate_jobs "
            "WHERE task_name = %s AND args ->> 'run_code' = %s ORDER BY id",
            [ADVANCE_TASK, str(run.code)],
        )
        return list(cursor.fetchall())


def test_it_runs_a_stage_again_after_a_retryable_failure_in_a_worker(author):
    plan = services.do_create_plan(author, parse_plan(PLAN), library=ingest_fixture_library())
    plan.refresh_from_db()
    run = services.check_start_run(author, plan, 1)  # enqueued: the worker takes it
    worker, log = spawn(["-m", "tests.research.flaky_worker", "flaky"], "flaky-worker")
    try:
        cp = _searched(run, 180, worker)
    finally:
        output = finish(worker, log)
    assert cp.attempts == 2, output
    assert cp.notes["retries"] == (
        "attempt 1 failed: library: connection reset (retryable); "
        "the queue runs the stage again in 5 s"
    )
    # the queued step and the searching step; the latter was retried once by the queue
    assert (1, "succeeded") in _step_jobs(run), _step_jobs(run)
