"""Normalizing an identity twice gives what normalizing it once gave (URLs, DOIs, arXiv).

Found by an attack: ``%2510.1234/`` became ``%10.1234/`` and then a control character;
a full-width ``example.com。`` was not ``example.com``; ``/a/%2E%2E/b`` kept its ``..``
until a second pass resolved it; an arXiv id with a trailing dot was refused.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from research.pipeline.identity import (
    canonical_id,
    normalize_arxiv_id,
    normalize_doi,
    normalize_url,
)

PIECES = ["%", "%25", "%2E", "%2e", "%2F", "%41", "%zz", ".", "..", "/", "//", "?", "&", "=", "#"]
WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
URL_PART = st.lists(st.sampled_from(PIECES) | WORDS, max_size=8).map("".join)
HOST_PART = st.lists(
    st.sampled_from(
        ["example", "com", "。", "．", "｡", ".", "-", "ＥＸＡＭＰＬＥ", "bücher", "xn--", "1"]
    )
    | st.text(alphabet="abcXYZ09-", max_size=5),
    min_size=1,
    max_size=6,
).map("".join)
URLS = st.builds(
    lambda scheme, user, host, port, path, query, fragment: (
        f"{scheme}://{user}{host}{port}/{path}{query}{fragment}"
    ),
    st.sampled_from(["http", "https", "HTTPS"]),
    st.sampled_from(["", "user:pw@", "@"]),
    HOST_PART,
    st.sampled_from(["", ":80", ":443", ":8080", ":"]),
    URL_PART,
    st.sampled_from(["", "?"]).flatmap(lambda q: URL_PART.map(lambda rest: q + rest if q else "")),
    st.sampled_from(["", "#frag"]),
)
DOI_PIECES = [
    "10.1234/",
    "10.48550/arXiv.",
    "doi:",
    "DOI: ",
    "https://doi.org/",
    "http://dx.doi.org/",
    "%25",
    "%2F",
    "%10",
    "%",
    ".full.pdf",
    ".pdf",
    "/abstract",
    ")",
    "(",
    "]",
    ".",
    ",",
    " ",
    "ABC",
    "x",
]
DOIS = st.lists(st.sampled_from(DOI_PIECES) | WORDS, min_size=1, max_size=8).map("".join)
ARXIV = st.builds(
    lambda prefix, core, version, tail: f"{prefix}{core}{version}{tail}",
    st.sampled_from(["", "arXiv:", "ARXIV : ", " "]),
    st.sampled_from(
        ["2101.00001", "1706.03762", "hep-th/9901001", "math.AG/0309136", "cs/0112017"]
    ),
    st.sampled_from(["", "v2", "v10", "V3"]),
    st.sampled_from(["", ".", ",", ";", ". ", ")", "\n"]),
)


@given(url=URLS)
def test_normalizing_a_url_twice_changes_nothing(url):
    try:
        once = normalize_url(url)
    except ValueError:
        assume(False)
    assert normalize_url(once) == once


@given(doi=DOIS)
def test_normalizing_a_doi_twice_changes_nothing(doi):
    once = normalize_doi(doi)
    assert normalize_doi(once) == once
    assert once.isprintable()


@given(arxiv_id=ARXIV)
def test_normalizing_an_arxiv_id_twice_changes_nothing(arxiv_id):
    once = normalize_arxiv_id(arxiv_id)
    assert normalize_arxiv_id(once) == once
    assert not once.endswith((".", ",", ";", ")"))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com。/a", "https://example.com/a"),
        ("https://ｅｘａｍｐｌｅ．ｃｏｍ/a", "https://example.com/a"),
        ("https://example.com/a/%2E%2E/b", "https://example.com/b"),
        ("https://example.com/a/%2e/b/", "https://example.com/a/b"),
    ],
)
def test_it_normalizes_the_urls_the_attack_used(url, expected):
    assert normalize_url(url) == expected
    assert canonical_id(url=url) == "url:" + expected


def test_a_doubly_escaped_doi_decodes_to_a_stable_printable_doi():
    assert normalize_doi("%2510.1234/abc") == normalize_doi(normalize_doi("%2510.1234/abc"))
    assert normalize_doi("10.1234%2Fabc%252Fdef") == "10.1234/abc/def"


def test_an_arxiv_id_with_a_trailing_dot_is_the_paper():
    assert normalize_arxiv_id("arXiv:2101.00001v2.") == "2101.00001"
    assert canonical_id(arxiv_id="2101.00001.") == "arxiv:2101.00001"
