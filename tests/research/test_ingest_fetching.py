"""The ingest stage fetches a round's pages concurrently and never refetches a failed one.

A local server records when each request started and ended, so the tests assert on
requests in flight together and on how often a URL was asked for, not on wall time.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from ledger.models import SearchHit
from research.models import Plan, PlanVersion
from research.pipeline.records import parse_plan
from research.services.checkpoints import do_open_checkpoint
from research.stages import ingest
from research.stages.base import StageContext
from tests.factories import make_run, plan_content
from tests.providers.recording_server import RecordingServer, most_at_once

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(settings):
    started = RecordingServer(delay_s=0.4)
    settings.FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.FETCH_CONCURRENCY = 4
    settings.FETCH_PER_HOST = 2
    yield started
    started.close()


def _run(owner, documents=50):
    plan = Plan.objects.create(owner=owner, question="Does X cause Y?")
    content = plan_content()
    content["budgets"]["documents"] = documents
    PlanVersion.create_next(plan, content, owner)
    plan.refresh_from_db()
    return make_run(plan, state="ingesting", started_at=timezone.now())


def _found(run, server, paths, query="vitamin D fractures"):
    for rank, path in enumerate(paths, start=1):
        url = server.url(path)
        SearchHit.objects.create(
            run=run,
            query_text=query,
            adapter="searxng",
            rank=rank,
            canonical_id=url,
            record={"url": url, "title": f"Page {path}"},
        )


def _ingest_round(run, round_no):
    checkpoint = do_open_checkpoint(run, round_no)
    plan = parse_plan(run.plan_version.content)
    ingest.run(StageContext(run=run, plan=plan, checkpoint=checkpoint, round=round_no))
    checkpoint.refresh_from_db()
    return checkpoint


def test_it_fetches_a_rounds_pages_concurrently_within_the_per_host_limit(author, server):
    run = _run(author)
    _found(run, server, [f"/slow/{n}" for n in range(4)])
    checkpoint = _ingest_round(run, 0)
    assert checkpoint.counters["admitted"] == 4 and checkpoint.counters["fetched"] == 4
    assert most_at_once(server) == 2  # FETCH_PER_HOST, all four on 127.0.0.1


def test_it_fetches_no_more_pages_than_the_budget_has_room_for(author, server):
    run = _run(author, documents=2)
    _found(run, server, [f"/slow/{n}" for n in range(5)])
    checkpoint = _ingest_round(run, 0)
    assert len(server.requests) == 2 and checkpoint.counters["admitted"] == 2
    assert "3 more sources were found but not used" in checkpoint.notes["documents budget"]


def test_it_fills_a_failed_pages_slot_with_the_next_in_rank(author, server):
    run = _run(author, documents=2)
    _found(run, server, ["/slow/a", "/missing/b", "/slow/c", "/slow/d"])
    checkpoint = _ingest_round(run, 0)
    assert {path for path, _, _ in server.requests} == {"/slow/a", "/missing/b", "/slow/c"}
    assert checkpoint.counters["admitted"] == 2 and checkpoint.counters["fetch_failed"] == 1


def test_it_does_not_fetch_a_page_that_failed_in_an_earlier_round(author, server):
    run = _run(author)
    _found(run, server, ["/slow/1", "/missing/gone"])
    first = _ingest_round(run, 0)
    assert list(first.cursor["errors"]) == [server.url("/missing/gone")]
    _found(run, server, ["/missing/gone", "/slow/2"], query="follow-up query")
    second = _ingest_round(run, 1)

    assert server.count("/missing/gone") == 1
    assert second.counters["fetch_skipped"] == 1 and second.counters["admitted"] == 2
    note = second.notes["earlier fetch errors"]
    assert note.startswith("1 page(s) that could not be fetched or ingested in an earlier round")
    assert server.url("/missing/gone") in note and "HTTP 404" in note
    assert "errors" not in second.cursor  # the failure is shown once, on its own round


def test_it_resumes_a_round_without_fetching_anything_again(author, server):
    run = _run(author)
    _found(run, server, ["/slow/1", "/missing/gone", "/slow/2"])
    _ingest_round(run, 0)
    again = _ingest_round(run, 0)  # the worker died after the stage's work: retried
    assert sorted(path for path, _, _ in server.requests) == ["/missing/gone", "/slow/1", "/slow/2"]
    assert again.counters["admitted"] == 2 and again.counters["fetch_failed"] == 1
