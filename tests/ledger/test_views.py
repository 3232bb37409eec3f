from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from ledger.models import Library, Upload
from ledger.services.uploads import do_ingest_uploads
from tests.factories import make_library, make_passage, make_snapshot

pytestmark = pytest.mark.django_db

HOSTILE = 'Aspirin helps. <script>alert("x")</script> Really <b>bold</b> claims.'


def _source(title="Aspirin and stroke", text=HOSTILE, **fields):
    """A source in a public (imported) library, readable by every signed-in user."""
    snapshot = make_snapshot(text, title=title, **fields)
    snapshot.source.libraries.add(make_library("shared"))
    return snapshot.source, snapshot


def test_it_requires_login(client):
    response = client.get(reverse("ledger-list-sources"))

    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_it_lists_sources_with_type_publisher_snapshots_and_clusters(client, researcher):
    source, _ = _source(publisher="The Lancet", cluster="c1")
    _source(title="Aspirin copy", text="Aspirin helps too.", cluster="c1")
    _source(title="Unrelated frogs", text="Frogs sing.", cluster="c2")
    client.force_login(researcher)

    response = client.get(reverse("ledger-list-sources"))

    html = response.content.decode()
    assert response.status_code == 200
    assert "Aspirin and stroke" in html and "The Lancet" in html and "Paper" in html
    assert "2 copies" in html and "unique" in html
    assert source.get_absolute_url() in html


def test_it_filters_by_search_and_duplicates_and_renders_a_partial_for_htmx(client, researcher):
    _source(cluster="c1")
    _source(title="Aspirin copy", text="Aspirin helps too.", cluster="c1")
    _source(title="Unrelated frogs", text="Frogs sing.", cluster="c2")
    client.force_login(researcher)
    url = reverse("ledger-list-sources")

    searched = client.get(url, {"q": "frogs"}).content.decode()
    duplicates = client.get(url, {"duplicates": "on"}, HTTP_HX_REQUEST="true").content.decode()

    assert "Unrelated frogs" in searched and "Aspirin and stroke" not in searched
    assert "Aspirin copy" in duplicates and "Unrelated frogs" not in duplicates
    assert duplicates.lstrip().startswith('<section id="source-table">')


def test_it_shows_snapshot_text_escaped_with_passage_boundaries(client, researcher):
    source, snapshot = _source()
    make_passage(snapshot, 0, 14)
    make_passage(snapshot, 15, len(HOSTILE))
    client.force_login(researcher)

    response = client.get(source.get_absolute_url())

    html = response.content.decode()
    assert '<script>alert("x")</script>' not in html and "<b>bold</b>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert html.count('class="pmark pmark-start"') == 2
    assert html.count('class="pmark pmark-end"') == 2


def test_it_returns_404_for_an_unknown_source_or_snapshot(client, researcher):
    source, _ = _source()
    client.force_login(researcher)

    assert (
        client.get(
            source.get_absolute_url(), {"snapshot": "00000000-0000-0000-0000-000000000000"}
        ).status_code
        == 404
    )
    assert (
        client.get(
            reverse("ledger-show-source", args=["00000000-0000-0000-0000-000000000001"])
        ).status_code
        == 404
    )


def _upload(client, **data):
    return client.post(
        reverse("ledger-create-upload"), data, HTTP_X_REQUESTED_WITH="XMLHttpRequest"
    )


def test_it_queues_uploads_and_shows_per_file_results(
    client, author, django_capture_on_commit_callbacks
):
    client.force_login(author)
    files = [
        SimpleUploadedFile(
            "note.txt", b"The trial enrolled forty adults over two years.", "text/plain"
        ),
        SimpleUploadedFile("empty.txt", b"", "text/plain"),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, new_library="My uploads", documents=files)

    assert response.status_code == 200
    assert 'id="upload-batch"' in response.content.decode()
    assert 'hx-trigger="every 1s"' in response.content.decode()
    upload = Upload.objects.get(filename="note.txt")
    assert upload.library == Library.objects.get(name="My uploads")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'ledger.ingest_uploads'"
        )
        assert cursor.fetchone()[0] == 1

    do_ingest_uploads(upload.batch)
    page = client.get(reverse("ledger-show-upload-batch", args=[upload.batch])).content.decode()

    assert "2 of 2 files processed" in page and "the file is empty" in page
    assert 'hx-trigger="every 1s"' not in page


def test_it_refuses_uploads_from_users_who_only_review(client, reviewer):
    client.force_login(reviewer)

    response = _upload(
        client, new_library="x", documents=[SimpleUploadedFile("a.txt", b"Words here.")]
    )

    assert response.status_code == 403
    assert not Upload.objects.exists()


def test_it_explains_an_upload_without_files_or_library(client, author):
    client.force_login(author)

    response = _upload(client)

    assert response.status_code == 400
    html = response.content.decode()
    assert "Choose at least one file" in html or "This field is required" in html
    assert "Pick a library or name a new one" in html


def test_it_hides_an_upload_batch_from_other_users(client, author, outsider):
    library = Library.objects.create(name="private-ish", owner=author)
    client.force_login(author)
    _upload(
        client, library=str(library.code), documents=[SimpleUploadedFile("a.txt", b"Words here.")]
    )
    batch = Upload.objects.get().batch
    client.force_login(outsider)

    assert client.get(reverse("ledger-show-upload-batch", args=[batch])).status_code == 404
