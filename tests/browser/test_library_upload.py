"""Browser: upload files with a progress bar, then watch per-file results arrive (Chromium)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import Upload
from ledger.services.uploads import do_ingest_uploads
from tests.browser.support import login

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


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
                # Markup as text: a Markdown code span keeps "<b>" as the words it shows
                # (raw HTML tags are dropped at extraction; tests/pipeline/test_extract.py).
                "buffer": b"# Notes\n\nThe `<b>trial</b>` enrolled forty adults.\n",
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
    # A locator, not wait_for_function: the Content-Security-Policy forbids eval.
    page.locator("#upload-batch", has_text="2 of 2 files processed").wait_for()

    text = page.inner_text("#upload-batch")
    assert "binary data" in text
    page.click("#upload-batch a:has-text('Notes')")
    page.wait_for_selector("#snapshot-text")
    assert "The <b>trial</b> enrolled forty adults." in page.inner_text("#snapshot-text")
