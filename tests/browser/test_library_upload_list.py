"""Browser: when an upload finishes, the library page lists the new library's sources and
offers the library in both pickers, with no reload (issue 26.9)."""

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


def test_it_shows_the_new_library_and_its_sources_once_the_upload_is_done(
    live_server, browser_page, author
):
    page, base = browser_page, live_server.url
    login(page, base, "author")
    page.goto(base + reverse("ledger-list-sources"))
    page.evaluate("window.notReloaded = true")
    assert "0 sources" in page.inner_text("#source-table")

    page.fill("input[name=new_library]", "Field notes")
    page.set_input_files(
        "input[name=documents]",
        [
            {
                "name": "notes.rst",
                "mimeType": "text/x-rst",
                "buffer": b"Notes\n=====\n\nForty adults.\n",
            },
            {
                "name": "trial.txt",
                "mimeType": "text/plain",
                "buffer": b"The trial enrolled forty adults.",
            },
        ],
    )
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#upload-batch")
    do_ingest_uploads(Upload.objects.values_list("batch", flat=True).distinct().get())
    page.locator("#upload-batch", has_text="2 of 2 files processed").wait_for()
    page.locator("#source-table", has_text="2 sources").wait_for()

    for picker in ("#upload-library-choice", "#filter-library-choice"):
        assert "Field notes" in page.locator(f"{picker} select").inner_text()
    assert page.locator("#upload-library-choice").count() == 1
    assert page.evaluate("window.notReloaded") is True
