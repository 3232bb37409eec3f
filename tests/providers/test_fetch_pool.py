"""Fetching many pages at once: concurrent, within the overall and per-host bounds."""

from __future__ import annotations

import pytest

from research.providers.fetcher import FetchHTTPError, FetchOptions, FetchPool
from research.providers.retry import ONE_ATTEMPT
from tests.providers.recording_server import RecordingServer, most_at_once


@pytest.fixture
def servers():
    started = [RecordingServer("127.0.0.1"), RecordingServer("127.0.0.2")]
    yield started
    for server in started:
        server.close()


def _options(**limits):
    return FetchOptions(timeout_s=5.0, allowed_hosts=("127.0.0.0/8",), retry=ONE_ATTEMPT, **limits)


def _fetch_all(urls, options):
    with FetchPool(options) as pool:
        futures = [pool.submit(url) for url in urls]
        return [future.exception() or future.result() for future in futures]


def test_it_fetches_pages_of_one_host_concurrently_up_to_the_per_host_limit(servers):
    one = servers[0]
    urls = [one.url(f"/slow/{n}") for n in range(4)]
    results = _fetch_all(urls, _options(max_concurrent=8, max_per_host=2))
    assert [r.final_url for r in results] == urls
    assert most_at_once(one) == 2


def test_it_keeps_to_the_overall_limit_across_hosts(servers):
    urls = [server.url(f"/slow/{n}") for n in range(3) for server in servers]
    _fetch_all(urls, _options(max_concurrent=3, max_per_host=8))
    assert most_at_once(*servers) == 3


def test_it_lets_other_hosts_go_ahead_while_one_host_is_at_its_limit(servers):
    first, second = servers
    urls = [first.url(f"/slow/{n}") for n in range(3)] + [second.url("/slow/x")]
    _fetch_all(urls, _options(max_concurrent=4, max_per_host=1))
    assert most_at_once(first) == 1
    [(_, start, _)] = second.requests
    assert start < first.requests[0][2]  # the other host's page began during the first


def test_it_hands_each_failure_back_as_that_pages_error(servers):
    one = servers[0]
    results = _fetch_all([one.url("/missing/a"), one.url("/slow/b")], _options())
    assert isinstance(results[0], FetchHTTPError) and results[0].status == 404
    assert results[1].status == 200


def test_it_cancels_the_unfinished_fetches_when_the_pool_is_left(servers):
    slow = servers[0]
    slow.delay_s = 3.0
    with FetchPool(_options(max_concurrent=1)) as pool:
        started = pool.submit(slow.url("/slow/a"))
        waiting = pool.submit(slow.url("/slow/b"))
        slow.wait_for("/slow/a")  # the first is being served, the second waits its turn
    assert started.cancelled() and waiting.cancelled()
    assert slow.arrived == ["/slow/a"]
