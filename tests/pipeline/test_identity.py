"""Canonical identity: one spelling per URL, DOI and arXiv id; a documented precedence."""

from __future__ import annotations

import hashlib

import pytest

from research.pipeline.identity import (
    MAX_ID_LENGTH,
    canonical_id,
    extract_arxiv_id,
    extract_doi,
    is_tracking_param,
    lenient_canonical_id,
    normalize_arxiv_id,
    normalize_doi,
    normalize_url,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM/Path", "http://example.com/Path"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/docs/", "http://example.com/docs"),
        ("http://example.com/a/#section-2", "http://example.com/a"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2"),
        ("http://example.com/x?utm_source=n&utm_medium=e&id=7", "http://example.com/x?id=7"),
        ("http://example.com/x?fbclid=abc&gclid=d&mc_cid=e&mc_eid=f", "http://example.com/x"),
        ("http://example.com/x?UTM_Campaign=x&q=a+b", "http://example.com/x?q=a%20b"),
        ("http://user:secret@example.com/", "http://example.com/"),
        ("http://example.com./", "http://example.com/"),
        ("http://example.com/%7euser/%41%2f", "http://example.com/~user/A%2F"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("https://bücher.de/", "https://xn--bcher-kva.de/"),
        ("http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"),
        ("  https://example.com/x  ", "https://example.com/x"),
        ("https://www.example.com/", "https://www.example.com/"),
    ],
)
def test_it_normalizes_urls(raw, expected):
    assert normalize_url(raw) == expected


def test_it_gives_spelling_variants_one_normal_form():
    variants = [
        "https://Example.com:443/report/?utm_source=x&b=2&a=1#top",
        "https://example.com/report?a=1&b=2",
        "https://EXAMPLE.COM/report/?a=1&fbclid=zzz&b=2",
    ]
    assert len({normalize_url(url) for url in variants}) == 1


def test_it_keeps_meaningful_query_parameters_and_their_order_of_values():
    assert normalize_url("http://e.com/s?q=2&q=1&page=3") == "http://e.com/s?page=3&q=1&q=2"
    assert normalize_url("http://e.com/s?ref=x") == "http://e.com/s?ref=x"


@pytest.mark.parametrize("raw", ["example.com/page", "/relative/path", "", "   "])
def test_it_refuses_urls_that_are_not_absolute(raw):
    with pytest.raises(ValueError):
        normalize_url(raw)


@pytest.mark.parametrize(
    ("name", "tracking"),
    [("utm_source", True), ("fbclid", True), ("GCLID", True), ("_hsenc", True)]
    + [("id", False), ("q", False), ("ref", False), ("page", False)],
)
def test_it_knows_tracking_parameters(name, tracking):
    assert is_tracking_param(name) is tracking


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://doi.org/10.1038/nature12373", "10.1038/nature12373"),
        ("http://dx.doi.org/10.1038/NATURE12373", "10.1038/nature12373"),
        ("https://doi.org/10.1000%2Fabc", "10.1000/abc"),
        ("doi:10.1016/S0140-6736(20)30183-5", "10.1016/s0140-6736(20)30183-5"),
        ("(see doi:10.1016/S0140-6736(20)30183-5).", "10.1016/s0140-6736(20)30183-5"),
        ("As shown [10.1145/3292500.3330701], we", "10.1145/3292500.3330701"),
        ("DOI: 10.1093/nar/gkaa1100.", "10.1093/nar/gkaa1100"),
        (
            "https://onlinelibrary.wiley.com/doi/full/10.1002/anie.201915678",
            "10.1002/anie.201915678",
        ),
        ("https://pubs.acs.org/doi/abs/10.1021/acs.jcim.0c00001", "10.1021/acs.jcim.0c00001"),
        ("https://dl.acm.org/doi/pdf/10.1145/3397271.3401075", "10.1145/3397271.3401075"),
        (
            "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0123456",
            "10.1371/journal.pone.0123456",
        ),
        ("https://doi.org/10.1101/2020.03.22.002386.full.pdf", "10.1101/2020.03.22.002386"),
    ],
)
def test_it_extracts_dois_from_urls_and_text(text, expected):
    assert extract_doi(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/blog/10.1234/not-a-citation",
        "version 10.2 of the tool",
        "",
        "no identifier here",
    ],
)
def test_it_finds_no_doi_where_there_is_none(text):
    assert extract_doi(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://arxiv.org/abs/2101.00001", "2101.00001"),
        ("https://arxiv.org/abs/2101.00001v3", "2101.00001"),
        ("https://arxiv.org/pdf/1706.03762v7.pdf", "1706.03762"),
        ("http://export.arxiv.org/abs/0704.0001", "0704.0001"),
        ("https://arxiv.org/abs/hep-th/9901001v2", "hep-th/9901001"),
        ("https://arxiv.org/abs/math.GT/0309136", "math.GT/0309136"),
        ("https://doi.org/10.48550/arXiv.2303.08774", "2303.08774"),
        ("as in arXiv:1810.04805v2, BERT", "1810.04805"),
        ("arxiv: 2005.11401", "2005.11401"),
        ("see https://arxiv.org/abs/2005.14165 for", "2005.14165"),
        ("DOI 10.48550/arXiv.2201.11903.", "2201.11903"),
    ],
)
def test_it_extracts_arxiv_ids_from_urls_and_text(text, expected):
    assert extract_arxiv_id(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "the number 2101.00001 alone",
        "https://example.com/abs/2101.00001",
        "arXiv:2101.000012",
        "https://arxiv.org/list/cs.CL/recent",
        "",
    ],
)
def test_it_finds_no_arxiv_id_where_there_is_none(text):
    assert extract_arxiv_id(text) is None


def test_it_normalizes_identifiers_directly():
    assert normalize_doi(" https://doi.org/10.1038/Nature12373. ") == "10.1038/nature12373"
    assert normalize_arxiv_id("arXiv:1706.03762v5") == "1706.03762"
    with pytest.raises(ValueError):
        normalize_arxiv_id("not-an-id")


def test_it_prefers_doi_then_arxiv_then_url_then_content_hash():
    digest = hashlib.sha256(b"content").hexdigest()
    url = "https://example.com/paper"
    everything = {
        "url": url,
        "doi": "10.1000/x",
        "arxiv_id": "2101.00001",
        "content_sha256": digest,
    }
    assert canonical_id(**everything) == "doi:10.1000/x"
    assert canonical_id(url=url, arxiv_id="2101.00001v2", content_sha256=digest) == (
        "arxiv:2101.00001"
    )
    assert canonical_id(url=url, content_sha256=digest) == "url:https://example.com/paper"
    assert canonical_id(content_sha256=digest.upper()) == f"sha256:{digest}"


def test_it_derives_identifiers_from_resolver_and_arxiv_urls():
    assert canonical_id(url="https://doi.org/10.1038/NATURE12373") == "doi:10.1038/nature12373"
    assert canonical_id(url="https://arxiv.org/pdf/1706.03762v7") == "arxiv:1706.03762"
    assert canonical_id(url="https://example.com/10.1038/x?utm_source=a") == (
        "url:https://example.com/10.1038/x"
    )


def test_it_treats_an_arxiv_datacite_doi_as_the_arxiv_paper():
    assert canonical_id(doi="10.48550/arXiv.1706.03762") == "arxiv:1706.03762"
    assert canonical_id(url="https://arxiv.org/abs/1706.03762v2") == "arxiv:1706.03762"


def test_it_collapses_a_preprint_with_its_journal_doi_onto_the_doi():
    from_arxiv = canonical_id(
        url="https://arxiv.org/abs/2101.00001", doi="10.1000/J.1", arxiv_id="2101.00001"
    )
    from_openalex = canonical_id(
        url="https://publisher.example/article/1", doi="https://doi.org/10.1000/j.1"
    )
    assert from_arxiv == from_openalex == "doi:10.1000/j.1"


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"doi": "not a doi"}, {"arxiv_id": "nope"}, {"content_sha256": "abc"}, {"url": "x"}],
)
def test_it_refuses_missing_or_malformed_identity(kwargs):
    with pytest.raises(ValueError):
        canonical_id(**kwargs)


def test_it_keeps_very_long_identities_bounded_and_distinct():
    first = canonical_id(url="https://example.com/" + "a" * 900 + "1")
    second = canonical_id(url="https://example.com/" + "a" * 900 + "2")
    assert len(first) <= MAX_ID_LENGTH
    assert len(second) <= MAX_ID_LENGTH
    assert first != second
    assert first.startswith("url:https://example.com/aaa")


def test_a_malformed_identifier_beside_a_url_falls_back_to_the_url():
    page = "https://example.org/p"
    assert lenient_canonical_id(page, doi="10.1234") == "url:https://example.org/p"
    assert lenient_canonical_id(page, arxiv_id="not an id") == "url:https://example.org/p"
    assert lenient_canonical_id(page, doi="10.1234/abc") == "doi:10.1234/abc"
    assert lenient_canonical_id(doi="10.1234") is None  # nothing else identifies it
    assert lenient_canonical_id() is None
