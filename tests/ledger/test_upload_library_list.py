"""After an upload the library page shows the new library and its sources without a reload,
and the file picker offers exactly the files the server takes (issue 26.9)."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ledger.forms import UPLOAD_SUFFIXES
from ledger.models import Library, Upload
from ledger.services.uploads import do_ingest_uploads

pytestmark = pytest.mark.django_db


def _upload(client, *names: str, library: str = "Field notes"):
    files = [
        SimpleUploadedFile(name, f"{name}: the trial enrolled forty adults.".encode(), "text/plain")
        for name in names
    ]
    return client.post(
        reverse("ledger-create-upload"),
        {"new_library": library, "documents": files},
        HTTP_X_REQUESTED_WITH="XMLHttpRequest",
    )


def test_it_offers_in_the_file_picker_exactly_what_the_server_takes(client, author):
    client.force_login(author)
    page = client.get(reverse("ledger-list-sources")).content.decode()
    accept = re.search(
        r'name="documents"[^>]*accept="([^"]+)"|accept="([^"]+)"[^>]*name="documents"', page
    )

    assert accept is not None
    assert (accept.group(1) or accept.group(2)).split(",") == list(UPLOAD_SUFFIXES)
    assert ".rst" in UPLOAD_SUFFIXES
    taken = _upload(client, *[f"doc{suffix}" for suffix in UPLOAD_SUFFIXES])
    assert taken.status_code == 200
    assert Upload.objects.count() == len(UPLOAD_SUFFIXES)
    # The picker offers those; another file is still taken, and ingestion reads its type
    # from its content (one it cannot read gets its own error line, the others go on).
    other = _upload(client, "report.docx", "notes.rst", library="Other")
    assert other.status_code == 200
    assert Upload.objects.count() == len(UPLOAD_SUFFIXES) + 2


def test_it_brings_the_new_library_and_its_sources_to_the_library_page_when_done(client, author):
    client.force_login(author)
    first = _upload(client, "notes.rst", "trial.txt").content.decode()
    batch = Upload.objects.values_list("batch", flat=True).distinct().get()
    poll = reverse("ledger-show-upload-batch", args=[batch]) + "?on=library"
    library = Library.objects.get(name="Field notes")
    page_url = "http://testserver" + reverse("ledger-list-sources") + "?q=trial"

    assert f'hx-get="{poll}"' in first  # the library page's poll says where it comes from
    pending = client.get(poll, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=page_url)
    assert "hx-swap-oob" not in pending.content.decode()
    assert "HX-Trigger-After-Settle" not in pending.headers

    do_ingest_uploads(batch)
    done = client.get(poll, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=page_url)
    html = done.content.decode()
    table = client.get(
        reverse("ledger-list-sources"), {"library": library.code}, HTTP_HX_REQUEST="true"
    )

    assert "2 of 2 files processed" in html
    assert "library-changed" in done.headers["HX-Trigger-After-Settle"]
    for picker in ("upload-library-choice", "filter-library-choice"):
        oob = re.search(rf'<span id="{picker}" hx-swap-oob="true">(.*?)</span>', html, re.S)
        assert oob is not None and f'value="{library.code}">Field notes</option>' in oob.group(1)
    assert "2 sources" in table.content.decode()


def test_it_sends_no_pickers_to_the_batch_page_itself(client, author):
    client.force_login(author)
    _upload(client, "trial.txt")
    batch = Upload.objects.values_list("batch", flat=True).distinct().get()
    do_ingest_uploads(batch)

    url = reverse("ledger-show-upload-batch", args=[batch])
    response = client.get(url, HTTP_HX_REQUEST="true")

    assert "hx-swap-oob" not in response.content.decode()
    assert "HX-Trigger-After-Settle" not in response.headers
