"""A worker killed in the middle of a stage costs only time: another worker finishes the run.

Worker A is SIGKILLed while the search stage is half done; its job stays ``doing`` with a
heartbeat that stops. Worker B's periodic ``retry_stalled_jobs`` gives the job back to the
queue once the heartbeat is older than ``WORKER_STALLED_AFTER_S`` (30 s), and the runner
resumes the stage from its checkpoint. The finished run's rows are compared with those
of an uninterrupted run of the same plan version: nothing is missing, nothing doubled.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from ledger.models import Claim, EvidenceLink, Passage, SearchHit, Source, VerifierVote
from research import runner, services
from research.models import Run, StageCheckpoint
from research.pipeline.planner import offline_plan
from tests.research.fixtures import duplicate_hits, ingest_fixture_library
from tests.research.processes import finish, spawn, start_worker, wait_for_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
QUESTION = "Does vitamin D supplementation reduce the risk of fractures in older adults?"


def wait_for_half_done_search(run: Run, worker, timeout_s: float = 300) -> StageCheckpoint:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        cp = StageCheckpoint.objects.filter(run=run, stage="searching", round=0).first()
        if (
            cp
            and cp.status == "running"
            and 2 <= len(cp.cursor.get("done_keys", [])) < cp.total - 2
        ):
            return cp
        assert worker.poll() is None, "worker A exited"
        time.sleep(0.05)
    raise AssertionError("the search stage never got half done")


def ledger_rows(run: Run) -> dict[str, object]:
    hits = SearchHit.objects.filter(run=run)
    claims = Claim.objects.filter(run=run)
    return {
        "hits": sorted(hits.values_list("query_text", "adapter", "rank", "canonical_id")),
        "claims": sorted(claims.values_list("fingerprint", flat=True)),
        "links": EvidenceLink.objects.filter(claim__run=run).count(),
        "votes": VerifierVote.objects.filter(claim__run=run).count(),
    }


def test_it_finishes_a_run_whose_worker_was_killed_mid_stage_without_duplicates(author):
    library = ingest_fixture_library()
    sources, passages = Source.objects.count(), Passage.objects.count()
    content = offline_plan(QUESTION)
    content.budgets.rounds = 0
    for sq in content.subquestions[2:]:  # evidence and counter-evidence: 7 queries, fewer claims
        sq.enabled = False
    plan = services.do_create_plan(author, content, library=library)
    plan.refresh_from_db()
    run = services.check_start_run(author, plan, 1)

    # Worker A searches slowly (tests.research.slow_worker) so that it can be caught half
    # done however fast the machine is; it is killed there, or stopped if that never comes.
    worker_a, log_a = spawn(["-m", "tests.research.slow_worker", "worker-a"], "worker-a")
    try:
        cp = wait_for_half_done_search(run, worker_a)
        os.kill(worker_a.pid, signal.SIGKILL)
        worker_a.wait()
    finally:
        finish(worker_a, log_a)
    killed_at = len(StageCheckpoint.objects.get(pk=cp.pk).cursor["done_keys"])

    worker_b, log_b = start_worker("worker-b")
    try:
        run = wait_for_run(run, {"awaiting_review", "failed", "cancelled"}, 900, worker_b)
    finally:
        print(finish(worker_b, log_b))

    assert run.state == "awaiting_review", run.error
    search = run.checkpoints.get(stage="searching", round=0)
    assert search.attempts == 2 and search.status == "done"
    assert 2 <= killed_at < search.total
    assert not duplicate_hits(run).exists()
    assert Source.objects.count() == sources and Passage.objects.count() == passages

    clean = services.check_start_run(author, plan, 1)
    clean = runner.run_to_end(clean.code)
    assert clean.state == "awaiting_review"
    assert ledger_rows(run) == ledger_rows(clean)
    assert Claim.objects.filter(run=run).count() == run.counters["claims"] > 0
