from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from config.procrastinate import TASK_RETRY
from ledger.models import Claim, SearchHit
from research import runner, services
from research.models import InvalidTransition, Run, RunState, StageCheckpoint
from research.pipeline.records import PlanContent, parse_plan
from research.providers.base import ProviderError
from research.stages import adapters, counter
from tests.research.fixtures import duplicate_hits, ingest_fixture_library

pytestmark = pytest.mark.django_db


def small_plan(**budgets) -> PlanContent:
    return parse_plan(
        {
            "question": "Does vitamin D supplementation reduce fractures in older adults?",
            "budgets": {"queries": 12, "rounds": 1, **budgets},
            "subquestions": [
                {
                    "key": "s1",
                    "text": "Does vitamin D supplementation reduce hip fractures?",
                    "dimension": "evidence",
                    "priority": 3,
                    "budget": 5,
                    "queries": [
                        {
                            "key": "s1q1",
                            "text": "vitamin D supplementation hip fracture trial",
                            "query_class": "benchmark",
                            "source_classes": ["library"],
                        },
                        {
                            "key": "s1q2",
                            "text": "vitamin D did not reduce fracture risk",
                            "query_class": "counter-evidence",
                            "source_classes": ["library"],
                        },
                    ],
                },
                {
                    "key": "s2",
                    "text": "How does vitamin D act on bone mineralization?",
                    "dimension": "mechanism",
                    "priority": 2,
                    "budget": 4,
                    "queries": [
                        {
                            "key": "s2q1",
                            "text": "vitamin D receptor calcium absorption bone",
                            "query_class": "mechanism",
                            "source_classes": ["library"],
                        },
                    ],
                },
            ],
        }
    )


@pytest.fixture
def library():
    return ingest_fixture_library()


def start(author, library, content: PlanContent | None = None) -> Run:
    plan = services.do_create_plan(author, content or small_plan(), library=library)
    plan.refresh_from_db()
    return services.check_start_run(author, plan, 1)


def run_until(run: Run, state: str) -> Run:
    """Step a run until it reaches ``state`` (mining and verifying are costly on CPU)."""
    for _ in range(30):
        run.refresh_from_db()
        if run.state == state or run.is_terminal:
            return run
        runner.step(run.code)
    raise AssertionError(f"run stuck in {run.state}")


def stages(run: Run) -> list[tuple[str, int, str]]:
    return [(cp.stage, cp.round, cp.status) for cp in run.checkpoints.order_by("pk")]


def test_it_runs_a_plan_through_every_stage_to_awaiting_review(author, library):
    run = runner.run_to_end(start(author, library).code)

    assert run.state == RunState.AWAITING_REVIEW
    assert run.finished_at is not None
    names = [s for s, _, _ in stages(run)]
    assert names[:5] == ["queued", "searching", "ingesting", "indexing", "retrieving"]
    assert names[-3:] == ["mining", "countering", "verifying"]
    assert all(status == "done" for _, _, status in stages(run))
    assert run.counters["queries"] >= 3 and run.counters["hits"] > 0
    assert run.counters["sources"] > 1 and run.counters["passages"] > 1
    assert "Evidence collection ended after round" in run.stop_reason
    retrieving = run.checkpoints.get(stage="retrieving", round=0)
    pools = retrieving.cursor["pools"]
    assert pools["s1"]["support"] and pools["s1"]["refute"]
    assert all(cp.counters["wall_s"] >= 0 for cp in run.checkpoints.all())
    claims = Claim.objects.filter(run=run)
    assert run.counters["claims"] == claims.count() > 0
    assert not claims.filter(status="pending").exists()  # every mined claim was verified
    assert not claims.filter(disposition="pending").exists()
    for claim in claims:  # searched against counter-evidence before it was judged
        intents = {q["intent"] for q in claim.counter_evidence["queries"]}
        assert {"negation", "limitation", "replication"} <= intents
    countering = run.checkpoints.get(stage="countering")
    assert countering.counters["counter_queries"] >= 5 * claims.count()
    candidates = run.candidates.all()
    assert candidates.filter(state="kept").count() == claims.count()
    assert all(c.reason for c in candidates)


def test_it_indexes_what_the_bm25_index_misses_before_searching_a_library(author, library):
    from ledger.models import SparseDocument
    from ledger.services.sparse_index import stale_passage_ids

    SparseDocument.objects.all().delete()  # a library stored before its BM25 index existed
    assert stale_passage_ids(("chunk",), library)

    run = start(author, library)
    runner.step(run.code)  # queued -> searching
    runner.step(run.code)  # searching

    searching = run.checkpoints.get(stage="searching", round=0)
    assert (
        "missing from the BM25 index and were indexed before searching"
        in (searching.notes["bm25 index"])
    )
    assert not stale_passage_ids(("chunk", "section"), library)
    assert searching.cursor["bm25_checked"] is True


def test_it_resumes_counter_evidence_without_searching_a_claim_twice(author, library, monkeypatch):
    run = run_until(start(author, library), RunState.COUNTERING)
    claims = list(Claim.objects.filter(run=run).order_by("pk"))
    assert len(claims) >= 2
    original = counter.gather
    gathered: list[int] = []

    def dies_on_second(claim, retrieve):
        if len(gathered) == 1:
            raise SystemExit("worker killed")
        gathered.append(claim.pk)
        return original(claim, retrieve)

    monkeypatch.setattr(counter, "gather", dies_on_second)
    with pytest.raises(SystemExit):
        runner.step(run.code)
    resumed: list[int] = []

    def recorded(claim, retrieve):
        resumed.append(claim.pk)
        return original(claim, retrieve)

    monkeypatch.setattr(counter, "gather", recorded)
    runner.step(run.code)

    run.refresh_from_db()
    assert run.state == RunState.VERIFYING
    assert gathered == [claims[0].pk] and claims[0].pk not in resumed
    assert sorted(resumed) == [c.pk for c in claims[1:]]
    assert not Claim.objects.filter(run=run, counter_evidence={}).exists()


def test_it_records_follow_ups_and_why(author, library):
    run = run_until(start(author, library), RunState.MINING)

    decided = run.checkpoints.get(stage="retrieving", round=0)
    followups = decided.cursor.get("followups", [])
    assessment = decided.cursor["assessment"]
    needing = {k for k, a in assessment.items() if a["weak"] or a["one_sided"]}
    assert {f["subquestion"] for f in followups} <= needing
    for f in followups:
        assert f["reason"].startswith(("weak", "one-sided"))
        assert SearchHit.objects.filter(run=run, query_text=f["text"], query=None).exists()
    if followups:
        assert run.counters["round"] == 1
        assert run.checkpoints.get(stage="searching", round=1).cursor["planned"] == followups
    else:
        assert "no subquestion has weak or one-sided evidence" in run.stop_reason


def test_it_resumes_a_stage_a_dead_worker_left_without_duplicating_rows(
    author, library, monkeypatch
):
    run = start(author, library)
    runner.step(run.code)  # queued -> searching
    calls: list[str] = []
    original = adapters.LibraryAdapter.search

    def dies_on_third(self, text, query_class, limit):
        calls.append(text)
        if len(calls) == 3:
            raise SystemExit("worker killed")  # not an Exception: nothing catches it
        return original(self, text, query_class, limit)

    monkeypatch.setattr(adapters.LibraryAdapter, "search", dies_on_third)
    with pytest.raises(SystemExit):
        runner.step(run.code)
    cp = StageCheckpoint.objects.get(run=run, stage="searching", round=0)
    assert cp.status == "running" and len(cp.cursor["done_keys"]) == 2
    hits_before = SearchHit.objects.filter(run=run).count()

    calls.clear()
    monkeypatch.setattr(adapters.LibraryAdapter, "search", original)
    runner.step(run.code)

    cp.refresh_from_db()
    assert cp.status == "done" and cp.attempts == 2
    assert len(cp.cursor["done_keys"]) == 3
    assert SearchHit.objects.filter(run=run).count() > hits_before
    run_until(run, RunState.MINING)
    assert not duplicate_hits(run).exists()


def test_it_stops_at_a_safe_point_when_cancelled(author, library, monkeypatch):
    run = start(author, library)
    runner.step(run.code)
    original = adapters.LibraryAdapter.search

    def cancel_after_first(self, text, query_class, limit):
        Run.objects.filter(pk=run.pk).update(cancel_requested=True)
        return original(self, text, query_class, limit)

    monkeypatch.setattr(adapters.LibraryAdapter, "search", cancel_after_first)
    result = runner.step(run.code)

    run.refresh_from_db()
    assert result.state == RunState.CANCELLED and not result.again
    assert run.stop_reason == "Cancelled at the user's request."
    cp = run.checkpoints.get(stage="searching")
    assert cp.status == "skipped" and cp.cursor["done_keys"] == ["s1q1"]


def test_it_keeps_to_the_query_budget_and_says_so(author, library):
    content = small_plan(queries=2, rounds=2)

    run = run_until(start(author, library, content), RunState.MINING)

    search = run.checkpoints.get(stage="searching", round=0)
    assert search.counters["issued"] == 2
    assert "query budget (2) left 1 queries unissued" in search.notes["query budget"]
    assert "the query budget (2) is spent" in run.stop_reason
    assert not run.checkpoints.filter(stage="searching", round=1).exists()


def test_it_stops_collecting_when_the_wall_time_is_spent(author, library):
    run = start(author, library, small_plan(wall_time_s=60))
    runner.step(run.code)
    Run.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(seconds=61))

    result = runner.step(run.code)

    run.refresh_from_db()
    assert result.state == RunState.MINING
    assert "Wall-time budget (60 s) reached during searching" in run.stop_reason
    assert [(s, st) for s, _, st in stages(run)][1:] == [
        ("searching", "done"),
        ("ingesting", "skipped"),
        ("indexing", "skipped"),
        ("retrieving", "skipped"),
    ]
    # what was found is still mined, searched against and verified (here: nothing was
    # ingested, so the three stages run and find nothing to do)
    run = runner.run_to_end(run.code)
    assert run.state == RunState.AWAITING_REVIEW
    assert [s for s, _, _ in stages(run)][-3:] == ["mining", "countering", "verifying"]


def test_it_hands_a_transient_error_to_the_queue_and_fails_a_permanent_one_in_words(
    author, library, monkeypatch, client
):
    run = start(author, library)
    runner.step(run.code)

    def flaky(self, text, query_class, limit):
        raise ProviderError("connection reset", permanent=False, provider="library")

    monkeypatch.setattr(adapters.LibraryAdapter, "search", flaky)
    with pytest.raises(runner.StageRetry):
        runner.step(run.code, attempt=0)  # the queue's first run of this step
    cp = run.checkpoints.get(stage="searching")
    said = "attempt 1 failed: library: connection reset (retryable); the queue runs the stage"
    assert cp.status == "pending" and cp.error == said + " again in 5 s"
    assert cp.notes["retries"] == cp.error  # kept on the run page after a later success
    client.force_login(author)
    assert said in client.get(run.get_absolute_url()).content.decode()

    def broken(self, text, query_class, limit):
        raise ProviderError("index is corrupt", permanent=True, provider="library")

    monkeypatch.setattr(adapters.LibraryAdapter, "search", broken)
    result = runner.step(run.code, attempt=1)

    run.refresh_from_db()
    assert result.state == RunState.FAILED
    assert run.error == "Searching failed: library: index is corrupt (permanent)"
    assert run.checkpoints.get(stage="searching").status == "failed"


def test_it_fails_the_run_in_words_on_the_queues_last_attempt(author, library, monkeypatch):
    run = start(author, library)
    runner.step(run.code)

    def flaky(self, text, query_class, limit):
        raise ProviderError("connection reset", permanent=False, provider="library")

    monkeypatch.setattr(adapters.LibraryAdapter, "search", flaky)
    last = TASK_RETRY.max_retries  # the queue ran this step that many times before
    result = runner.step(run.code, attempt=last)

    run.refresh_from_db()
    assert result.state == RunState.FAILED and not result.again
    assert run.error == (
        "Searching failed: library: connection reset (retryable)"
        f" (gave up after {last + 1} attempts of the stage)"
    )


def test_it_waits_the_task_policys_delays_when_stepping_without_a_queue(
    author, library, monkeypatch
):
    run = start(author, library)
    runner.step(run.code)
    original = adapters.LibraryAdapter.search
    failures = iter([True, True])

    def flaky_twice(self, text, query_class, limit):
        if next(failures, False):
            raise ProviderError("connection reset", permanent=False, provider="library")
        return original(self, text, query_class, limit)

    slept: list[float] = []
    monkeypatch.setattr(adapters.LibraryAdapter, "search", flaky_twice)
    run = runner.run_to_end(run.code, sleep=slept.append)

    assert run.state == RunState.AWAITING_REVIEW, run.error
    assert slept == [5, 25]  # TASK_RETRY: 5 s, then 25 s
    search = run.checkpoints.get(stage="searching", round=0)
    assert search.attempts == 3 and search.status == "done"
    assert search.notes["retries"].startswith("attempt 2 failed")


def test_it_refuses_an_undeclared_transition(author, library):
    run = start(author, library)

    with pytest.raises(InvalidTransition):
        run.transition(RunState.MINING)


def test_it_says_which_models_a_stage_ran_without(author, library, settings):
    settings.RERANKER_MODEL = ""

    run = run_until(start(author, library), RunState.MINING)

    retrieving = run.checkpoints.filter(stage="retrieving").order_by("round").first()
    assert retrieving is not None
    assert retrieving.notes["reranker"].startswith("none (RERANKER_MODEL is not set)")
    assert "reranker_reason" not in retrieving.notes
    # Said once per run, on the stage that ranks passages: not on every searching round.
    assert all("reranker" not in cp.notes for cp in run.checkpoints.filter(stage="searching"))
