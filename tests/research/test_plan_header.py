"""The plan page's header names the version a save made, without a reload (issue 26.9)."""

from __future__ import annotations

import pytest

from research.models import Plan
from tests.research.test_plan_views import create, current, edit

pytestmark = pytest.mark.django_db


def header(html: str) -> str:
    start = html.index('id="plan-meta"')
    return html[start : html.index("</p>", start)]


def test_it_sends_the_new_version_in_the_header_with_an_htmx_save(client, author, library):
    client.force_login(author)
    create(client, library=library.pk)
    plan = Plan.objects.get(owner=author)
    _, content = current(plan)
    sq = content.subquestions[0]

    for number in (2, 3):
        response = edit(
            client, plan, "edit_subquestion", key=sq.key, text=f"Edited {number}?",
            dimension=sq.dimension, priority=sq.priority, budget=sq.budget, enabled="on",
        )  # fmt: skip
        html = response.content.decode()
        assert f"Saved version {number}" in html
        assert 'hx-swap-oob="true"' in header(html)
        assert f"version {number} of {number}" in header(html)


def test_it_renders_the_header_once_and_in_place_on_the_page(client, author, library):
    client.force_login(author)
    create(client, library=library.pk)
    page = client.get(Plan.objects.get(owner=author).get_absolute_url()).content.decode()

    assert page.count('id="plan-meta"') == 1
    assert "hx-swap-oob" not in header(page)
    assert "version 1 of 1" in header(page)
