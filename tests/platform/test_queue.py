"""Procrastinate jobs travel through the real queue to real worker processes."""

from __future__ import annotations

import pytest
from django.db import connection

from research.models import Run
from research.tasks import count_on_run
from tests.factories import make_plan, make_run
from tests.processes import start_worker, stop

pytestmark = pytest.mark.django_db(transaction=True)


def _jobs():
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, args, status FROM procrastinate_jobs ORDER BY id")
        return cursor.fetchall()


def _run(author) -> Run:
    return make_run(make_plan(author), state="queued")


def test_it_runs_a_deferred_job_in_a_worker_process(author):
    run = _run(author)
    count_on_run.defer(run_code=str(run.code), key="probe")
    worker = start_worker("--one-shot")
    assert worker.wait(timeout=120) == 0, stop(worker)
    run.refresh_from_db()
    assert run.counters == {"probe": 1}


def test_it_shares_one_queue_between_two_workers_without_running_a_job_twice(author):
    run = _run(author)
    keys = [f"job{i}" for i in range(30)]
    for key in keys:
        count_on_run.defer(run_code=str(run.code), key=key)
    workers = [start_worker("--one-shot", "--name", f"w{n}") for n in range(2)]
    for worker in workers:
        assert worker.wait(timeout=180) == 0, stop(worker)
    run.refresh_from_db()
    assert run.counters == dict.fromkeys(keys, 1)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(DISTINCT id) FROM procrastinate_jobs "
            "WHERE task_name = 'research.count_on_run' AND status = 'succeeded' "
            "AND args ->> 'run_code' = %s",
            [str(run.code)],
        )
        total, distinct = cursor.fetchone()
    assert total == distinct == 30, _jobs()
