"""Procrastinate jobs travel through the real queue to real worker processes.

The job is the production one, ``research.advance_run``, stepping runs whose user asked
them to stop: one step each ends them cancelled, so the checkpoint's ``attempts`` shows
how many times a worker ran the job.
"""

from __future__ import annotations

import pytest
from django.db import connection

from research.models import Run, StageCheckpoint
from research.queue import ADVANCE_TASK, schedule_step
from tests.factories import make_plan, make_run
from tests.processes import start_worker, stop

pytestmark = pytest.mark.django_db(transaction=True)


def _jobs():
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, task_name, args, status FROM procrastinate_jobs ORDER BY id")
        return cursor.fetchall()


def test_it_runs_a_deferred_job_in_a_worker_process(author):
    run = make_run(make_plan(author), state="queued", cancel_requested=True)
    schedule_step(run)
    worker = start_worker("--one-shot")
    assert worker.wait(timeout=120) == 0, stop(worker)
    run.refresh_from_db()
    assert run.state == "cancelled", _jobs()
    assert StageCheckpoint.objects.get(run=run, stage="queued").attempts == 1


def test_it_shares_one_queue_between_two_workers_without_running_a_job_twice(author):
    plan = make_plan(author)
    runs = [make_run(plan, state="queued", cancel_requested=True) for _ in range(30)]
    for run in runs:
        schedule_step(run)
    workers = [start_worker("--one-shot", "--name", f"w{n}") for n in range(2)]
    for worker in workers:
        assert worker.wait(timeout=180) == 0, stop(worker)
    assert set(Run.objects.filter(plan_version__plan=plan).values_list("state", flat=True)) == {
        "cancelled"
    }
    attempts = StageCheckpoint.objects.filter(run__in=runs).values_list("attempts", flat=True)
    assert sorted(attempts) == [1] * 30, _jobs()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(DISTINCT id) FROM procrastinate_jobs "
            "WHERE task_name = %s AND status = 'succeeded' AND args ->> 'run_code' = ANY(%s)",
            [ADVANCE_TASK, [str(run.code) for run in runs]],
        )
        total, distinct = cursor.fetchone()
    assert total == distinct == 30, _jobs()
