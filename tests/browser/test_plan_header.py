"""Browser: saving an edit updates the plan header's version at once, no reload (issue 26.9)."""

from __future__ import annotations

import pytest

from tests.browser.support import login
from tests.factories import make_plan

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def save_first_subquestion(page, text: str) -> None:
    page.click("#item-sq1 a:text('Edit')")  # htmx swaps the card for its form
    page.fill("form#item-sq1 textarea[name=text]", text)
    page.click("form#item-sq1 button[type=submit]")


def test_it_shows_the_saved_version_in_the_header_without_a_reload(
    live_server, browser_page, author
):
    page, base = browser_page, live_server.url
    plan = make_plan(author, question="Does vitamin D prevent falls?")
    login(page, base, "author")
    page.goto(base + plan.get_absolute_url())
    page.evaluate("window.notReloaded = true")
    assert "version 1 of 1" in page.inner_text("#plan-meta")

    save_first_subquestion(page, "Do trials show fewer falls?")
    page.wait_for_selector("text=Saved version 2")
    save_first_subquestion(page, "Do trials show fewer falls in care homes?")
    page.wait_for_selector("text=Saved version 3")

    assert "version 3 of 3" in page.inner_text("#plan-meta")
    assert page.locator("#plan-meta").count() == 1
    assert page.evaluate("window.notReloaded") is True  # htmx swapped, nothing reloaded
