"""A plan without a library runs over a web search adapter: search, fetch, ingest, retrieve.

A local server plays both a SearXNG instance (its JSON API) and the web pages it points
at, one of them missing; the fetcher's allow-list names 127.0.0.1 on purpose.
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from ledger.models import Library, Passage, SearchHit, Source, SparseDocument
from research import runner, services
from research.models import RunState
from research.pipeline.records import parse_plan
from tests.pages import PageHandler

pytestmark = pytest.mark.django_db

PAGES = {
    "/articles/trial": (
        "Vitamin D trial in nursing homes",
        "<p>In a randomized trial, vitamin D and calcium supplementation reduced hip fractures "
        "among older women living in nursing homes.</p><p>The effect appeared after six months "
        "of daily supplementation and persisted for the whole follow-up period.</p>",
    ),
    "/articles/null": (
        "No fracture benefit from vitamin D alone",
        "<p>A pooled analysis found that vitamin D supplementation alone did not reduce "
        "fractures in community-dwelling older adults.</p><p>Trials with calcium co-"
        "supplementation showed a small reduction in hip fracture risk.</p>",
    ),
}


class Handler(PageHandler):
    def do_GET(self):  # noqa: N802
        url = urlparse(self.path)
        if url.path == "/search":
            query = parse_qs(url.query)["q"][0]
            base = f"http://{self.headers['Host']}"
            results = [
                {"url": f"{base}{path}", "title": title, "content": query, "score": 1.0}
                for path, (title, _) in PAGES.items()
            ] + [{"url": f"{base}/articles/gone", "title": "Gone", "content": "missing page"}]
            return self.send_page(200, "application/json", json.dumps({"results": results}))
        if url.path in PAGES:
            title, body = PAGES[url.path]
            html = f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
            return self.send_page(
                200, "text/html; charset=utf-8", html + body + "</article></body>"
            )
        return self.send_page(404, "text/plain", "not found")


@pytest.fixture
def web(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.SEARXNG_URL = f"http://127.0.0.1:{server.server_address[1]}"
    settings.FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    yield server
    server.shutdown()


def web_plan(*queries: tuple[str, str, str]):
    """One subquestion whose queries (key, text, class) all go to the web adapters."""
    return parse_plan(
        {
            "question": "Does vitamin D reduce fractures in older adults?",
            "budgets": {"rounds": 0},
            "subquestions": [
                {
                    "key": "s1",
                    "text": "Does vitamin D supplementation reduce hip fractures?",
                    "queries": [
                        {"key": k, "text": t, "query_class": c, "source_classes": ["web"]}
                        for k, t, c in queries
                    ],
                }
            ],
        }
    )


def test_it_searches_fetches_and_ingests_web_results(author, web):
    content = web_plan(
        ("s1q1", "vitamin D hip fractures trial", "benchmark"),
        ("s1q2", "vitamin D no fracture benefit", "counter-evidence"),
    )
    plan = services.do_create_plan(author, content)  # no library: the web alone
    plan.refresh_from_db()
    run = services.check_start_run(author, plan, 1, enqueue=False)

    for _ in range(5):  # queued, searching, ingesting, indexing, retrieving
        runner.step(run.code)
    run.refresh_from_db()

    assert run.state == RunState.MINING, run.error
    hits = SearchHit.objects.filter(run=run, adapter="searxng")
    assert hits.count() == 6 and hits.filter(source__isnull=False).count() == 4
    captures = Library.objects.get(name=f"web captures of plan {plan.code}")
    assert set(captures.sources.values_list("title", flat=True)) == {t for t, _ in PAGES.values()}
    assert Source.objects.filter(url__endswith="/articles/trial", source_type="web").exists()
    ingest = run.checkpoints.get(stage="ingesting")
    assert ingest.counters["admitted"] == 2 and ingest.counters["fetched"] == 2
    assert "HTTP 404" in ingest.notes["fetch errors"]
    # ingest indexes BM25 postings in the commit that writes the passages
    indexed = SparseDocument.objects.filter(passage__source__in=captures.sources.all())
    assert indexed.count() == Passage.objects.filter(source__in=captures.sources.all()).count() > 0
    assert run.checkpoints.get(stage="indexing").counters["bm25_indexed"] == 0
    pools = run.checkpoints.get(stage="retrieving").cursor["pools"]["s1"]
    assert pools["support"] and pools["refute"]


class DeadLinkHandler(Handler):
    """Like Handler, plus a result whose host refuses connections (a retryable failure)."""

    dead_url = ""

    def do_GET(self):  # noqa: N802
        url = urlparse(self.path)
        if url.path != "/search":
            return super().do_GET()
        base = f"http://{self.headers['Host']}"
        results = [
            {"url": f"{base}{path}", "title": title, "content": "x", "score": 1.0}
            for path, (title, _) in PAGES.items()
        ] + [{"url": self.dead_url, "title": "Dead", "content": "unreachable"}]
        return self.send_page(200, "application/json", json.dumps({"results": results}))


def test_it_completes_a_run_with_a_dead_link_and_shows_the_failure(author, settings, client):
    import socket

    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        DeadLinkHandler.dead_url = f"http://127.0.0.1:{closed.getsockname()[1]}/paper"
    server = ThreadingHTTPServer(("127.0.0.1", 0), DeadLinkHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.SEARXNG_URL = f"http://127.0.0.1:{server.server_address[1]}"
    settings.FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.HTTP_BACKOFF_S = 0.01  # the one HTTP retry policy, with short waits
    try:
        content = web_plan(("s1q1", "vitamin D hip fractures trial", "benchmark"))
        plan = services.do_create_plan(author, content)
        plan.refresh_from_db()
        run = services.check_start_run(author, plan, 1, enqueue=False)
        run = runner.run_to_end(run.code)
    finally:
        server.shutdown()

    assert run.state == RunState.AWAITING_REVIEW, run.error  # the run completed
    assert run.counters["claims"] > 0
    ingest = run.checkpoints.get(stage="ingesting")
    assert ingest.attempts == 1  # the stage itself was never retried
    assert ingest.counters["admitted"] == 2
    [reason] = ingest.cursor["errors"].values()
    assert list(ingest.cursor["errors"]) == [DeadLinkHandler.dead_url]
    assert "ConnectError" in reason and "gave up after 3 attempts" in reason
    client.force_login(author)
    page = client.get(run.get_absolute_url()).content.decode()
    assert "1 page(s) skipped while ingesting" in page and DeadLinkHandler.dead_url in page
    assert "gave up after 3 attempts" in page
