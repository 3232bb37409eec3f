"""The new-plan form follows the server: no web adapter means a library is preselected."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import make_library

pytestmark = pytest.mark.django_db


def test_it_preselects_a_library_when_no_web_adapter_is_configured(client, author, settings):
    settings.SEARXNG_URL = ""
    library = make_library("scifact")
    client.force_login(author)
    html = client.get(reverse("research-create-plan")).content.decode()
    assert f'<option value="{library.pk}" selected>scifact</option>' in html
    assert "web search only" not in html
    assert "No web search adapter is configured on this server" in html


def test_it_offers_web_search_only_when_an_adapter_is_configured(client, author, settings):
    settings.SEARXNG_URL = "http://127.0.0.1:9"
    make_library("scifact")
    client.force_login(author)
    html = client.get(reverse("research-create-plan")).content.decode()
    assert "(no library: web search only)" in html and "besides searxng" in html
    assert " selected>scifact" not in html


def test_it_says_what_to_do_with_neither_a_library_nor_an_adapter(client, author, settings):
    settings.SEARXNG_URL = ""
    client.force_login(author)
    html = client.get(reverse("research-create-plan")).content.decode()
    assert 'id="no-library"' in html and "upload documents or a corpus" in html


def test_it_refuses_an_overlong_scope(client, author):
    client.force_login(author)
    response = client.post(
        reverse("research-create-plan"), {"question": "Does vitamin D help?", "scope": "x" * 2001}
    )
    assert response.status_code == 400
    assert "The scope is limited to 2,000 characters (it has 2001)" in response.content.decode()
