"""Browser: upload files with a progress bar, then watch per-file results arrive (Chromium)."""

from __future__ import annotations

import os
import shutil

import pytest
from django.urls import reverse

from ledger.models import Upload
from ledger.services.uploads import do_ingest_uploads

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def browser_page():
    if not os.path.exists(CHROMIUM) or not shutil.which(CHROMIUM):
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is required under CI")
        pytest.skip("no Chromium at /usr/bin/chromium")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls beside Playwright
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(90_000)
        page.on("dialog", lambda dialog: pytest.fail(f"a script opened a dialog: {dialog}"))
        yield page
        context.close()
        browser.close()


def login(page, base, username):
    page.goto(base + reverse("login"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-" + username)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login" not in url)


def test_it_uploads_with_progress_and_shows_per_file_results(live_server, browser_page, author):
    page, base = browser_page, live_server.url
    login(page, base, "author")
    page.goto(base + reverse("ledger-list-sources"))

    page.fill("input[name=new_library]", "Field notes")
    page.set_input_files(
        "input[name=documents]",
        [
            {
                "name": "notes.md",
                "mimeType": "text/markdown",
                "buffer": b"# Notes\n\nThe <b>trial</b> enrolled forty adults.\n",
            },
            {"name": "noise.txt", "mimeType": "text/plain", "buffer": bytes(range(256)) * 64},
        ],
    )
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#upload-batch")

    assert page.eval_on_selector("#upload-progress", "el => el.value") == 100
    assert "0 of 2 files processed" in page.inner_text("#upload-batch")
    batch = Upload.objects.values_list("batch", flat=True).distinct().get()

    do_ingest_uploads(batch)  # one worker step
    page.wait_for_function(
        "document.querySelector('#upload-batch').innerText.includes('2 of 2 files processed')"
    )

    text = page.inner_text("#upload-batch")
    assert "binary data" in text
    page.click("#upload-batch a:has-text('Notes')")
    page.wait_for_selector("#snapshot-text")
    assert "The <b>trial</b> enrolled forty adults." in page.inner_text("#snapshot-text")
