"""Each adapter parses a recorded real-shaped response into normalized records."""

from __future__ import annotations

import json
from datetime import date

import httpx
import pytest

from research.providers.search import RetryPolicy, run_search_sync
from research.providers.search.arxiv import ArxivAdapter, build_query
from research.providers.search.openalex import OpenAlexAdapter, rebuild_abstract
from research.providers.search.searxng import SearxngAdapter
from research.providers.search.wikipedia import WikipediaAdapter

NO_RETRY = RetryPolicy(max_attempts=1, backoff_s=0)


async def _no_sleep(seconds):
    return None


def _replay(body: bytes, content_type: str, seen: list[httpx.Request], status: int = 200):
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=body, headers={"Content-Type": content_type})

    return httpx.MockTransport(handler)


def _search(adapter, body, content_type, query="q", limit=10, status=200):
    seen: list[httpx.Request] = []
    result = run_search_sync(
        [query],
        [adapter],
        limit=limit,
        policy=NO_RETRY,
        transport=_replay(body, content_type, seen, status),
        sleep=_no_sleep,
    )
    [outcome] = result.outcomes
    return outcome, seen


def test_it_parses_a_searxng_json_answer(recorded):
    adapter = SearxngAdapter("http://searx.local:8080/")
    outcome, seen = _search(adapter, recorded("searxng_search.json"), "application/json", "rrf")
    assert outcome.ok, outcome.error
    params = seen[0].url.params
    assert str(seen[0].url).startswith("http://searx.local:8080/search?")
    assert params["format"] == "json"
    assert params["q"] == "rrf"
    records = outcome.records
    assert [r.rank for r in records] == [1, 2, 3, 5]  # the URL-less result is dropped
    first, arxiv, doi, elastic = records
    assert first.adapter == "searxng"
    assert first.query == "rrf"
    assert first.raw_score == 4.5
    assert first.source_type == "web"
    assert first.canonical_id == "url:https://plg.uwaterloo.ca/~gvcormac/cormacksigir09-rrf.pdf"
    assert first.extra["engines"] == ["duckduckgo", "bing"]
    assert arxiv.canonical_id == arxiv.identifier == "arxiv:2104.08663"
    assert arxiv.source_type == "preprint"
    assert arxiv.snippet.endswith("& BEIR changes that.")
    assert arxiv.date == date(2021, 4, 17)
    assert doi.doi == "10.1145/1571941.1572114"
    assert doi.source_type == "paper"
    assert elastic.canonical_id.endswith("/current/rrf.html")  # fragment dropped
    assert elastic.date == date(2024, 2, 1)
    assert elastic.publisher == "www.elastic.co"


def test_it_explains_a_searxng_403_as_a_disabled_json_format():
    outcome, _ = _search(
        SearxngAdapter("http://searx.local"), b"Forbidden", "text/html", status=403
    )
    assert outcome.permanent is True
    assert "json format" in outcome.error


def test_it_parses_an_arxiv_atom_feed(recorded):
    outcome, seen = _search(ArxivAdapter(), recorded("arxiv_query.xml"), "application/atom+xml")
    assert outcome.ok, outcome.error
    assert seen[0].url.host == "export.arxiv.org"
    assert seen[0].url.params["sortBy"] == "relevance"
    dpr, contriever, old = outcome.records
    assert dpr.title == "Dense Passage Retrieval for Open-Domain Question Answering"
    assert dpr.arxiv_id == "2004.04906"
    assert dpr.doi == "10.18653/v1/2020.emnlp-main.550"
    assert dpr.canonical_id == "doi:10.18653/v1/2020.emnlp-main.550"  # journal DOI wins
    assert dpr.url == "https://arxiv.org/abs/2004.04906v3"
    assert dpr.authors == ("Vladimir Karpukhin", "Barlas Oğuz")
    assert dpr.date == date(2020, 4, 10)
    assert dpr.publisher == "Proceedings of EMNLP 2020"
    assert dpr.extra["primary_category"] == "cs.CL"
    assert dpr.extra["pdf_url"] == "http://arxiv.org/pdf/2004.04906v3"
    assert dpr.source_type == "preprint"
    assert dpr.raw_score is None
    assert contriever.canonical_id == "arxiv:2112.09118"
    assert "Contriever is trained" in contriever.snippet
    assert old.canonical_id == "arxiv:cs/0105004"


def test_it_reports_an_arxiv_error_feed_as_permanent(recorded):
    outcome, _ = _search(
        ArxivAdapter(), recorded("arxiv_error.xml"), "application/atom+xml", status=400
    )
    assert outcome.permanent is True
    assert "max_results must be non-negative" in outcome.error


def test_it_reports_an_arxiv_error_entry_even_with_status_200(recorded):
    outcome, _ = _search(ArxivAdapter(), recorded("arxiv_error.xml"), "application/atom+xml")
    assert outcome.permanent is True
    assert "API error" in outcome.error


def test_it_builds_arxiv_queries_from_free_text_and_keeps_field_syntax():
    assert build_query("the state-of-the-art of BM25") == 'all:"state-of-the-art" AND all:BM25'
    assert build_query("ti:transformer AND au:vaswani") == "ti:transformer AND au:vaswani"
    assert build_query("???") == ""


def test_it_parses_openalex_works(recorded):
    adapter = OpenAlexAdapter(mailto="ops@example.org")
    outcome, seen = _search(adapter, recorded("openalex_works.json"), "application/json", "rrf")
    assert outcome.ok, outcome.error
    params = seen[0].url.params
    assert params["search"] == "rrf"
    assert params["mailto"] == "ops@example.org"
    rrf, beir, dataset = outcome.records
    assert rrf.canonical_id == "doi:10.1145/1571941.1572114"
    assert rrf.raw_score == pytest.approx(812.4567)
    assert rrf.snippet == "Reciprocal Rank Fusion (RRF), a simple method combining a rankings."
    assert rrf.authors == ("Gordon V. Cormack", "Charles L. A. Clarke", "Stefan Buettcher")
    assert rrf.publisher.startswith("Proceedings of the 32nd")
    assert rrf.extra["pdf_url"].endswith("cormacksigir09-rrf.pdf")
    assert rrf.date == date(2009, 7, 19)
    assert beir.canonical_id == "arxiv:2104.08663"  # arXiv DataCite DOI -> arXiv id
    assert (beir.doi, beir.arxiv_id) == ("10.48550/arxiv.2104.08663", "2104.08663")
    assert beir.source_type == "preprint"
    assert beir.snippet == ""
    assert dataset.canonical_id == "url:https://example.org/hybrid-retrieval"
    assert dataset.source_type == "dataset"


def test_it_reports_an_openalex_error_message(recorded):
    outcome, _ = _search(
        OpenAlexAdapter(), recorded("openalex_error.json"), "application/json", status=400
    )
    assert outcome.permanent is True
    assert "per-page is not a valid parameter value" in outcome.error


def test_it_rebuilds_an_inverted_abstract():
    assert rebuild_abstract({"world": [1], "hello": [0], "again": [2, 3]}) == (
        "hello world again again"
    )
    assert rebuild_abstract(None) == ""


def test_it_parses_wikipedia_search_results(recorded):
    adapter = WikipediaAdapter("de")
    outcome, seen = _search(adapter, recorded("wikipedia_search.json"), "application/json", "bm25")
    assert outcome.ok, outcome.error
    assert seen[0].url.host == "de.wikipedia.org"
    params = seen[0].url.params
    assert (params["list"], params["srsearch"], params["format"]) == ("search", "bm25", "json")
    bm25, ltr, tfidf = outcome.records
    assert bm25.url == "https://de.wikipedia.org/wiki/Okapi_BM25"
    assert bm25.snippet.startswith("In information retrieval, Okapi BM25 (BM is")
    assert "<span" not in bm25.snippet
    assert bm25.source_type == "encyclopedia"
    assert bm25.date == date(2024, 3, 18)
    assert bm25.extra["pageid"] == 13150475
    assert ltr.snippet.startswith('"Learning to rank" or')
    assert "& ranking" in ltr.snippet
    assert tfidf.url == "https://de.wikipedia.org/wiki/Tf%E2%80%93idf_(statistics)/weighting"
    assert tfidf.canonical_id == "url:" + tfidf.url


def test_it_classifies_wikipedia_api_errors(recorded):
    lagged, _ = _search(WikipediaAdapter(), recorded("wikipedia_maxlag.json"), "application/json")
    assert lagged.permanent is False
    assert "maxlag" in lagged.error
    bad, _ = _search(WikipediaAdapter(), recorded("wikipedia_badvalue.json"), "application/json")
    assert bad.permanent is True
    assert "nosrsearch" in bad.error


def test_it_refuses_a_wikipedia_language_that_is_not_a_code():
    with pytest.raises(ValueError):
        WikipediaAdapter("evil.example.com/x?")


@pytest.mark.parametrize(
    "adapter",
    [SearxngAdapter("http://searx.local"), OpenAlexAdapter(), WikipediaAdapter()],
)
def test_it_reports_malformed_json_as_permanent(adapter):
    outcome, _ = _search(adapter, b"<html>not json</html>", "text/html")
    assert outcome.permanent is True
    assert "malformed" in outcome.error


def test_it_limits_records_to_the_requested_number(recorded):
    outcome, _ = _search(
        WikipediaAdapter(), recorded("wikipedia_search.json"), "application/json", limit=2
    )
    assert len(outcome.records) == 2


def test_it_serializes_records_for_search_hits(recorded):
    outcome, _ = _search(OpenAlexAdapter(), recorded("openalex_works.json"), "application/json")
    data = outcome.records[0].to_json()
    assert data["date"] == "2009-07-19"
    assert data["retrieved_at"].endswith("+00:00")
    assert data["authors"][0] == "Gordon V. Cormack"
    assert json.loads(json.dumps(data)) == data
