"""The runner retries retryable failures, reports every error, and runs adapters together."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from research.providers.search import (
    RateLimiter,
    RetryPolicy,
    enabled_adapters,
    run_search,
    run_search_sync,
)
from research.providers.search.arxiv import ArxivAdapter
from research.providers.search.openalex import OpenAlexAdapter
from research.providers.search.searxng import SearxngAdapter
from research.providers.search.wikipedia import WikipediaAdapter

POLICY = RetryPolicy(max_attempts=3, backoff_s=0.5, max_backoff_s=4.0)
ADAPTERS = {
    "searxng": (
        lambda: SearxngAdapter("http://searx.local", min_interval_s=0),
        "searxng_search.json",
    ),
    "arxiv": (lambda: ArxivAdapter(min_interval_s=0), "arxiv_query.xml"),
    "openalex": (lambda: OpenAlexAdapter(min_interval_s=0), "openalex_works.json"),
    "wikipedia": (lambda: WikipediaAdapter(min_interval_s=0), "wikipedia_search.json"),
}


class Sleeps:
    """Records requested sleeps instead of sleeping."""

    def __init__(self):
        self.calls = []

    async def __call__(self, seconds):
        self.calls.append(seconds)


def _scripted(steps, calls):
    """A handler that plays ``steps`` in order: bytes -> 200, int -> that status, exc -> raise."""

    def handler(request):
        calls.append(request)
        step = steps[min(len(calls), len(steps)) - 1]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, int):
            return httpx.Response(step, content=b"oops", headers={"Retry-After": "2"})
        return httpx.Response(200, content=step)

    return httpx.MockTransport(handler)


def _run(name, steps, recorded, policy=POLICY):
    factory, fixture = ADAPTERS[name]
    steps = [recorded(fixture) if step == "ok" else step for step in steps]
    calls: list[httpx.Request] = []
    sleeps = Sleeps()
    result = run_search_sync(
        ["dense retrieval"],
        [factory()],
        policy=policy,
        transport=_scripted(steps, calls),
        sleep=sleeps,
    )
    return result, calls, sleeps


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_it_retries_timeouts_then_reports_a_timeout_error(name, recorded):
    result, calls, sleeps = _run(name, [httpx.ReadTimeout("read timed out")], recorded)
    [outcome] = result.outcomes
    assert len(calls) == 3
    assert outcome.attempts == 3
    assert outcome.records == []
    assert outcome.permanent is False
    assert "timed out" in outcome.error
    assert "gave up after 3 attempts" in outcome.error
    assert result.errors == [outcome]
    assert sleeps.calls == [0.5, 1.0]  # exponential backoff between attempts


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_it_retries_a_server_error_and_then_succeeds(name, recorded):
    result, calls, _ = _run(name, [500, "ok"], recorded)
    [outcome] = result.outcomes
    assert outcome.ok, outcome.error
    assert outcome.attempts == 2
    assert len(calls) == 2
    assert len(outcome.records) >= 3
    assert result.errors == []


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_it_gives_up_at_once_on_a_permanent_client_error(name, recorded):
    result, calls, _ = _run(name, [400, "ok"], recorded)
    [outcome] = result.outcomes
    assert len(calls) == 1
    assert outcome.permanent is True
    assert outcome.error.startswith(f"{name}: HTTP 400")


def test_it_honours_retry_after_on_429(recorded):
    result, calls, sleeps = _run("openalex", [429, "ok"], recorded)
    assert result.outcomes[0].ok
    assert 2.0 in sleeps.calls


def test_it_reports_a_connection_failure_as_retryable(recorded):
    result, calls, _ = _run("wikipedia", [httpx.ConnectError("refused")], recorded)
    [outcome] = result.outcomes
    assert outcome.permanent is False
    assert "ConnectError" in outcome.error
    assert len(calls) == 3


def test_it_bounds_a_hanging_attempt_with_a_hard_timeout(recorded):
    async def hang(request):
        await asyncio.sleep(5)
        return httpx.Response(200, content=recorded("openalex_works.json"))

    adapter = OpenAlexAdapter(timeout_s=0.05)
    policy = RetryPolicy(max_attempts=2, backoff_s=0)
    result = run_search_sync(["q"], [adapter], policy=policy, transport=httpx.MockTransport(hang))
    [outcome] = result.outcomes
    assert outcome.attempts == 2
    assert "timed out after 0.05 s" in outcome.error
    assert outcome.permanent is False


def test_it_reports_an_adapter_bug_instead_of_raising(recorded):
    class Broken(WikipediaAdapter):
        async def search(self, client, query, limit):
            raise KeyError("surprise")

    result = run_search_sync(["q"], [Broken()], policy=POLICY, sleep=Sleeps())
    [outcome] = result.outcomes
    assert outcome.permanent is True
    assert "KeyError" in outcome.error


def test_it_runs_all_adapters_and_queries_and_keeps_the_good_results(recorded):
    def handler(request):
        if request.url.host == "api.openalex.org":
            return httpx.Response(503, content=b"down")
        body = {
            "searx.local": "searxng_search.json",
            "export.arxiv.org": "arxiv_query.xml",
            "en.wikipedia.org": "wikipedia_search.json",
        }[request.url.host]
        return httpx.Response(200, content=recorded(body))

    sleeps = Sleeps()
    adapters = [factory() for factory, _ in ADAPTERS.values()]
    adapters[1] = ArxivAdapter()  # keeps arXiv's 3 s courtesy interval
    result = run_search_sync(
        ["first query", "second query"],
        adapters,
        policy=RetryPolicy(max_attempts=2, backoff_s=0),
        transport=httpx.MockTransport(handler),
        sleep=sleeps,
    )
    # arXiv's second request waits out the rest of its 3 s interval: 3 s less the real time
    # since the first one (more than the other adapters' 0.1-0.5 s intervals, at most 3 s;
    # the limiter's arithmetic is tested with a fake clock below).
    arxiv_pauses = [pause for pause in sleeps.calls if pause > 0.5]
    assert len(arxiv_pauses) == 1 and arxiv_pauses[0] <= 3.0
    assert [(o.query, o.adapter) for o in result.outcomes] == [
        (query, name) for query in ["first query", "second query"] for name in ADAPTERS
    ]
    assert {o.adapter for o in result.errors} == {"openalex"}
    assert all("HTTP 503" in o.error for o in result.errors)
    assert {r.adapter for r in result.records} == {"searxng", "arxiv", "wikipedia"}
    assert {r.query for r in result.records} == {"first query", "second query"}
    assert result.to_json()["outcomes"][0]["records"] == 4


def test_it_runs_adapters_concurrently():
    started, release = [], asyncio.Event()

    async def handler(request):
        started.append(request.url.host)
        if len(started) == 2:
            release.set()
        await asyncio.wait_for(release.wait(), timeout=2)  # needs both in flight at once
        return httpx.Response(200, json={"results": []})

    adapters = [SearxngAdapter("http://searx.local"), OpenAlexAdapter()]
    result = asyncio.run(
        run_search(["q"], adapters, policy=POLICY, transport=httpx.MockTransport(handler))
    )
    assert result.errors == []
    assert sorted(started) == ["api.openalex.org", "searx.local"]


def test_it_spaces_requests_by_the_rate_limit():
    now = [100.0]
    pauses = []

    async def fake_sleep(seconds):
        pauses.append(seconds)
        now[0] += seconds

    async def three_requests():
        limiter = RateLimiter(3.0, clock=lambda: now[0], sleep=fake_sleep)
        times = []
        for _ in range(3):
            await limiter.wait()
            times.append(now[0])
            now[0] += 0.5  # the request itself takes half a second
        return times

    assert asyncio.run(three_requests()) == [100.0, 103.0, 106.0]
    assert pauses == [2.5, 2.5]


def test_it_caps_backoff_and_prefers_retry_after():
    policy = RetryPolicy(max_attempts=5, backoff_s=1.0, max_backoff_s=3.0)
    assert [policy.delay(n) for n in (1, 2, 3)] == [1.0, 2.0, 3.0]
    assert policy.delay(1, retry_after=2.5) == 2.5
    assert policy.delay(1, retry_after=60) == 3.0


def test_it_enables_adapters_from_settings(settings):
    settings.SEARXNG_URL = ""
    settings.ARXIV_ENABLED = False
    settings.OPENALEX_ENABLED = False
    settings.WIKIPEDIA_ENABLED = False
    assert enabled_adapters() == []
    settings.SEARXNG_URL = "http://searxng:8080"
    settings.ARXIV_ENABLED = True
    settings.OPENALEX_ENABLED = True
    settings.OPENALEX_MAILTO = "ops@example.org"
    settings.WIKIPEDIA_ENABLED = True
    settings.WIKIPEDIA_LANG = "fr"
    searxng, arxiv, openalex, wikipedia = enabled_adapters()
    assert isinstance(searxng, SearxngAdapter)
    assert searxng.base_url == "http://searxng:8080"
    assert isinstance(arxiv, ArxivAdapter)
    assert isinstance(openalex, OpenAlexAdapter)
    assert openalex.mailto == "ops@example.org"
    assert isinstance(wikipedia, WikipediaAdapter)
    assert wikipedia.endpoint == "https://fr.wikipedia.org/w/api.php"


def test_it_searches_nothing_when_no_adapter_is_enabled(settings):
    settings.SEARXNG_URL = ""
    settings.ARXIV_ENABLED = settings.OPENALEX_ENABLED = settings.WIKIPEDIA_ENABLED = False
    result = run_search_sync(["q"])
    assert result.outcomes == []
    assert result.records == []
