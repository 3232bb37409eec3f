"""Shared Playwright plumbing for browser tests: Debian's Chromium, never a download."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connections
from django.urls import reverse

from reports.exports.pdf import CHROMIUM_ARGS  # the flags the product launches it with

CHROMIUM = "/usr/bin/chromium"


@contextmanager
def chromium_page(
    *, allow_orm_beside_playwright: bool = True, fail_on_dialog: bool = True
) -> Iterator[object]:
    """A fresh page in headless Chromium; under CI a missing browser fails, never skips.

    The test fails if the page opened a dialog or the Content-Security-Policy blocked
    anything on it (Chromium reports each block on the console).

    Playwright's sync API runs an event loop in this thread, and Django refuses sync ORM
    calls from such a thread unless DJANGO_ALLOW_ASYNC_UNSAFE is set (test process only:
    tests/processes.py removes it from the servers' and workers' environments).
    """
    if not os.path.exists(CHROMIUM) or not shutil.which(CHROMIUM):
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is required under CI")
        pytest.skip("no Chromium at /usr/bin/chromium")
    if allow_orm_beside_playwright:
        os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(90_000)
        if fail_on_dialog:  # hostile evidence must not be able to run alert() & co.
            page.on("dialog", lambda d: pytest.fail(f"a script opened a dialog: {d.message}"))
        # Every page runs under the strict Content-Security-Policy: anything it blocks
        # (an inline script or handler, a style attribute, eval) is a page that broke.
        blocked: list[str] = []
        page.on("console", lambda m: _note_csp_violation(m.text, blocked))
        try:
            yield page
            if blocked:
                pytest.fail("the Content-Security-Policy blocked: " + " | ".join(blocked))
        finally:
            context.close()
            browser.close()
            # ORM calls made beside Playwright's loop get a connection of their own; close
            # it here, or it outlives the test and blocks the test database's teardown.
            connections.close_all()


def _note_csp_violation(text: str, blocked: list[str]) -> None:
    if "Content Security Policy" in text:
        blocked.append(text[:300])


def login(page, base: str, username: str) -> None:
    """Log in through the real form; fixture users' passwords are ``pw-<username>``."""
    page.goto(base + reverse("login"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-" + username)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)
