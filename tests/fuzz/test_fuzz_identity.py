"""URL canonicalisation and identifier extraction over anything a search result may hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from research.pipeline.identity import (
    MAX_ID_LENGTH,
    canonical_id,
    extract_arxiv_id,
    extract_doi,
    host_of,
    normalize_url,
)

URLISH = st.builds(
    lambda scheme, middle, tail: f"{scheme}://{middle}{tail}",
    st.sampled_from(["http", "https", "ftp", "HTTP", ""]),
    st.text(max_size=40),
    st.text(max_size=40),
) | st.text(max_size=80)


@given(text=URLISH)
def test_it_never_crashes_on_hosts_dois_and_arxiv_ids(text):
    assert isinstance(host_of(text), str)
    doi = extract_doi(text)
    assert doi is None or doi.startswith("10.")
    assert extract_arxiv_id(text) is None or isinstance(extract_arxiv_id(text), str)


@given(text=URLISH)
def test_it_gives_a_bounded_identity_with_a_host_or_a_value_error(text):
    try:
        identity = canonical_id(url=text)
    except ValueError:
        return
    assert len(identity) <= MAX_ID_LENGTH
    if identity.startswith("url:"):
        assert not identity.startswith(("url:http:///", "url:https:///"))
        assert normalize_url(identity[4:]) == identity[4:] or "#sha256=" in identity


@pytest.mark.parametrize(
    "url", ["http://[]", "http://a\uff03b/x", "http://[::1", "http://x:99999/"]
)
def test_it_handles_urls_urlsplit_refuses(url):
    assert host_of(url) == "" or host_of(url) == "x"
    assert extract_doi(url) is None and extract_arxiv_id(url) is None
    with pytest.raises(ValueError):
        canonical_id(url=url)


@pytest.mark.parametrize("url", ["http:///a", "http://:80/a", "http://@/a", "https://./a"])
def test_it_gives_hostless_urls_no_shared_identity(url):
    with pytest.raises(ValueError, match="host"):
        canonical_id(url=url)


def test_it_bounds_arxiv_identities():
    identity = canonical_id(arxiv_id="a" + "-" * 700 + "/1234567")
    assert len(identity) == MAX_ID_LENGTH and identity.startswith("arxiv:")
