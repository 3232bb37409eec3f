"""Fetching from a real local HTTP server: results, caps, redirects and error classes."""

from __future__ import annotations

import hashlib
import tracemalloc
from dataclasses import replace

import pytest

from research.providers.base import ProviderError
from research.providers.fetcher import (
    FetchHTTPError,
    FetchOptions,
    FetchTimeout,
    FetchTooLarge,
    TooManyRedirects,
    effective_content_type,
    fetch_url_sync,
    sniff_content_type,
)
from research.providers.retry import ONE_ATTEMPT, RetryPolicy
from tests.providers.conftest import MIB, PAGE_HTML


def _allowed(**overrides):
    """One attempt per fetch (error classes); the retry tests below pass their policy."""
    base = FetchOptions(
        timeout_s=2.0, max_redirects=5, allowed_hosts=("127.0.0.1",), retry=ONE_ATTEMPT
    )
    return replace(base, **overrides)


QUICK_RETRIES = RetryPolicy(max_attempts=3, backoff_s=0.01)


def test_it_fetches_a_local_html_page_when_127_0_0_1_is_allowed(local_server, settings):
    settings.FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    url = local_server.url("/page.html")
    result = fetch_url_sync(url)
    assert result.status == 200
    assert result.body == PAGE_HTML
    assert result.sha256 == hashlib.sha256(PAGE_HTML).hexdigest()
    assert result.requested_url == result.final_url == url
    assert result.redirect_chain == ()
    assert result.content_type == "text/html"
    assert result.charset == "utf-8"
    assert result.headers["etag"] == '"v1"'
    assert result.fetched_at.tzinfo is not None


def test_it_fetches_a_pdf_and_recognises_it_by_its_magic_bytes(local_server):
    result = fetch_url_sync(local_server.url("/paper.pdf"), options=_allowed())
    assert result.body.startswith(b"%PDF-")
    assert result.declared_content_type == "application/octet-stream"
    assert result.sniffed_content_type == "application/pdf"
    assert result.content_type == "application/pdf"


def test_it_decodes_a_gzip_encoded_page(local_server):
    result = fetch_url_sync(local_server.url("/gzip-page"), options=_allowed())
    assert result.body == PAGE_HTML
    assert result.headers["content-encoding"] == "gzip"


def test_it_cuts_off_a_50_mb_response_with_an_error_naming_the_cap(local_server, settings):
    settings.FETCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.FETCH_MAX_BYTES = 20 * MIB
    tracemalloc.start()
    try:
        with pytest.raises(FetchTooLarge) as info:
            fetch_url_sync(local_server.url("/big"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "size cap of 20 MiB" in message
    assert "FETCH_MAX_BYTES=20971520" in message
    assert "cut off" in message
    assert info.value.permanent is True
    assert peak < 45 * MIB  # the 50 MB were never held at once


def test_it_refuses_a_declared_oversized_body_before_reading_it(local_server):
    with pytest.raises(FetchTooLarge) as info:
        fetch_url_sync(local_server.url("/big?declare=1"), options=_allowed(max_bytes=MIB))
    assert "declares 52428800 bytes" in str(info.value)


def test_it_stops_a_decompression_bomb_at_the_cap(local_server):
    with pytest.raises(FetchTooLarge):
        fetch_url_sync(local_server.url("/bomb"), options=_allowed(max_bytes=4 * MIB))


def test_it_follows_redirects_and_records_the_chain(local_server):
    result = fetch_url_sync(local_server.url("/chain/2"), options=_allowed())
    assert result.final_url == local_server.url("/page.html")
    assert result.redirect_chain == (
        local_server.url("/chain/2"),
        local_server.url("/chain/1"),
        local_server.url("/chain/0"),
    )
    assert result.body == PAGE_HTML


def test_it_gives_up_after_the_redirect_cap(local_server):
    with pytest.raises(TooManyRedirects) as info:
        fetch_url_sync(local_server.url("/chain/9"), options=_allowed(max_redirects=3))
    assert info.value.permanent is True
    assert "more than 3 redirects" in str(info.value)
    assert len(info.value.chain) == 4


def test_it_detects_a_redirect_loop(local_server):
    with pytest.raises(TooManyRedirects) as info:
        fetch_url_sync(local_server.url("/loop"), options=_allowed())
    assert "loop" in str(info.value)


@pytest.mark.parametrize(
    ("status", "permanent"),
    [(400, True), (403, True), (404, True), (410, True), (408, False), (429, False)]
    + [(500, False), (502, False), (503, False)],
)
def test_it_classifies_http_errors(local_server, status, permanent):
    with pytest.raises(FetchHTTPError) as info:
        fetch_url_sync(local_server.url(f"/status/{status}"), options=_allowed())
    assert info.value.status == status
    assert info.value.permanent is permanent


def test_it_reports_a_slow_server_as_a_retryable_timeout(local_server):
    with pytest.raises(FetchTimeout) as info:
        fetch_url_sync(local_server.url("/slow?s=1.5"), options=_allowed(timeout_s=0.2))
    assert info.value.permanent is False


def test_it_stops_a_dripping_server_at_the_total_deadline(local_server):
    options = _allowed(timeout_s=1.0, total_timeout_s=0.4)
    with pytest.raises(FetchTimeout) as info:
        fetch_url_sync(local_server.url("/drip"), options=options)
    assert "longer than 0.4 s" in str(info.value)


def test_it_reports_a_refused_connection_as_retryable():
    with pytest.raises(ProviderError) as info:
        fetch_url_sync("http://127.0.0.1:9/", options=_allowed())
    assert info.value.permanent is False


def test_it_fetches_a_page_that_failed_twice_on_the_third_attempt(local_server):
    result = fetch_url_sync(
        local_server.url("/flaky/a?fail=2"), options=_allowed(retry=QUICK_RETRIES)
    )
    assert result.status == 200 and result.body == PAGE_HTML
    assert local_server.handler.requests["/flaky/a"] == 3


def test_it_gives_up_on_a_dead_link_after_the_policys_attempts_and_says_so():
    with pytest.raises(ProviderError) as info:
        fetch_url_sync("http://127.0.0.1:9/", options=_allowed(retry=QUICK_RETRIES))
    assert info.value.attempts == 3
    assert str(info.value).endswith("(retryable); gave up after 3 attempts")


def test_it_never_fetches_a_missing_page_twice(local_server):
    with pytest.raises(FetchHTTPError) as info:
        fetch_url_sync(local_server.url("/status/404"), options=_allowed(retry=QUICK_RETRIES))
    assert info.value.permanent and info.value.attempts == 1
    assert local_server.handler.requests["/status/404"] == 1


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"%PDF-1.7\n...", "application/pdf"),
        (b"\xef\xbb\xbf  <!DOCTYPE html><html>", "text/html"),
        (b"\n<HTML><body>", "text/html"),
        (b"<?xml version='1.0'?><feed/>", "application/xml"),
        (b"\x89PNG\r\n\x1a\nrest", "image/png"),
        (b"PK\x03\x04rest", "application/zip"),
        (b"just some text", ""),
    ],
)
def test_it_sniffs_content_types_from_magic_bytes(head, expected):
    assert sniff_content_type(head) == expected


@pytest.mark.parametrize(
    ("declared", "sniffed", "expected"),
    [
        ("text/html", "application/pdf", "application/pdf"),
        ("application/octet-stream", "text/html", "text/html"),
        ("text/plain", "text/html", "text/html"),
        ("", "", "application/octet-stream"),
        ("application/json", "", "application/json"),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "application/zip",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
    ],
)
def test_it_lets_magic_bytes_overrule_only_vague_declarations(declared, sniffed, expected):
    assert effective_content_type(declared, sniffed) == expected
