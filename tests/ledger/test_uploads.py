from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from ledger.models import Library, Passage, Source, Upload
from ledger.services.ingest import DocumentInput, document_from_fetch, ingest_documents
from ledger.services.uploads import do_ingest_uploads, do_queue_uploads
from tests.pipeline.minipdf import make_pdf

pytestmark = pytest.mark.django_db

STORY = (
    "The city council voted on Tuesday to approve a new budget that raises spending on "
    "public transport by twelve percent, adds two hundred bus drivers and freezes fares "
    "for pensioners until the end of next year, the mayor's office said in a statement. "
    "Opposition members criticised the plan as unaffordable and warned that property taxes "
    "would have to rise to pay for it within three years."
)
PAGE = (
    "<html><head><title>Budget vote</title></head><body><nav><a href='/'>Home</a>"
    "<a href='/news'>News index</a></nav><article><h1>Budget vote</h1><p>{}</p></article>"
    "<footer>Copyright Example Media Group</footer></body></html>"
)


def _file(name, data, content_type="application/octet-stream"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def _queue(author, *files, library_name="uploads"):
    library = Library.objects.create(name=library_name)
    batch = do_queue_uploads(library, author, list(files))
    return library, batch


def test_it_ingests_good_files_and_reports_each_bad_file_clearly(author):
    library, batch = _queue(
        author,
        _file("story.html", PAGE.format(STORY).encode(), "text/html"),
        _file("broken.html", b"<html><body><div><<<>>></div", "text/html"),
        _file("empty.txt", b"", "text/plain"),
        _file("noise.txt", bytes(range(256)) * 16, "text/plain"),
        _file("latin.txt", "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve.".encode("cp1252")),
        _file("paper.pdf", make_pdf([["Dose one lowered risk."], ["Dose two did not."]])),
        _file("notes.md", b"# Notes\n\nThe trial enrolled 40 adults.\n"),
    )

    do_ingest_uploads(batch)

    uploads = {u.filename: u for u in Upload.objects.filter(batch=batch)}
    assert {n for n, u in uploads.items() if u.status == "added"} == {
        "story.html",
        "paper.pdf",
        "notes.md",
    }
    reasons = {n: u.error_reason for n, u in uploads.items() if u.status == "failed"}
    assert reasons == {
        "broken.html": "malformed_html",
        "empty.txt": "empty",
        "noise.txt": "binary",
        "latin.txt": "encoding",
    }
    assert all(uploads[n].error for n in reasons)
    assert library.sources.count() == 3
    story = uploads["story.html"].source
    assert story is not None
    text = story.snapshots.get().text
    assert "Copyright Example Media Group" not in text and "News index" not in text
    pdf_pages = {p.page for p in Passage.objects.filter(source=uploads["paper.pdf"].source)}
    assert pdf_pages == {1, 2}
    for passage in Passage.objects.filter(source__libraries=library):
        assert passage.text == passage.snapshot.text[passage.start : passage.end]


def test_it_makes_one_source_of_two_identical_uploads(author):
    data = PAGE.format(STORY).encode()
    library, batch = _queue(
        author, _file("a.html", data, "text/html"), _file("b.html", data, "text/html")
    )
    do_ingest_uploads(batch)
    _, again = _queue(author, _file("c.html", data, "text/html"), library_name="other")

    do_ingest_uploads(again)

    assert Source.objects.count() == 1
    source = Source.objects.get()
    assert source.canonical_id.startswith("sha256:")
    assert source.snapshots.count() == 1
    statuses = sorted(Upload.objects.values_list("filename", "status"))
    assert statuses == [("a.html", "added"), ("b.html", "duplicate"), ("c.html", "duplicate")]
    assert {lib.name for lib in source.libraries.all()} == {"uploads", "other"}
    assert Upload.objects.get(filename="c.html").source == source


def test_it_puts_a_lightly_edited_copy_in_the_same_cluster(author):
    edited = (
        STORY.replace("Tuesday", "Wednesday").replace("twelve", "12") + " Reporting by A. Clerk."
    )
    unrelated = (
        "A new species of frog was discovered in the cloud forests of Ecuador by a team of "
        "biologists who spent four months surveying streams at night."
    )
    _, first = _queue(author, _file("original.html", PAGE.format(STORY).encode(), "text/html"))
    do_ingest_uploads(first)
    _, second = _queue(
        author,
        _file("copy.txt", edited.encode(), "text/plain"),
        _file("frog.txt", unrelated.encode(), "text/plain"),
        library_name="later",
    )

    do_ingest_uploads(second)

    sources = {u.filename: u.source for u in Upload.objects.all() if u.source is not None}
    assert len({s.pk for s in sources.values()}) == 3
    assert sources["copy.txt"].cluster == sources["original.html"].cluster
    assert sources["frog.txt"].cluster != sources["original.html"].cluster


def test_it_resumes_a_batch_after_a_crash_without_duplicating(author):
    library, batch = _queue(
        author, _file("a.txt", b"Alpha beta gamma delta."), _file("b.txt", b"Epsilon zeta eta.")
    )
    # The worker died after ingesting but before recording the per-file results.
    Upload.objects.filter(batch=batch).update(status="running")
    docs = [DocumentInput(raw=b"Alpha beta gamma delta.", filename="a.txt")]
    ingest_documents(docs, library)

    do_ingest_uploads(batch)

    assert Source.objects.count() == 2
    statuses = dict(Upload.objects.values_list("filename", "status"))
    assert statuses == {"a.txt": "duplicate", "b.txt": "added"}
    assert do_ingest_uploads(batch) == []


def test_it_enqueues_one_ingest_job_per_batch(author, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        _, batch = _queue(author, _file("a.txt", b"Alpha beta gamma delta."))

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT task_name, args ->> 'batch', queue_name FROM procrastinate_jobs"
            " WHERE task_name = 'ledger.ingest_uploads'"
        )
        assert cursor.fetchall() == [("ledger.ingest_uploads", str(batch), "ingest")]


def test_it_collapses_the_same_text_at_two_urls_into_one_source_with_an_alias(author):
    library = Library.objects.create(name="web")
    page = PAGE.format(STORY).encode()
    first = DocumentInput(raw=page, url="https://news.example/a", content_type="text/html")
    second = DocumentInput(raw=page, url="https://mirror.example/copy", content_type="text/html")

    results = ingest_documents([first, second], library)
    again = ingest_documents([first], library)

    assert [r.status for r in results] == ["added", "duplicate"]
    assert again[0].status == "unchanged"
    source = Source.objects.get()
    assert source.canonical_id == "url:https://news.example/a"
    assert source.metadata["aliases"] == ["url:https://mirror.example/copy"]


def test_it_keeps_one_snapshot_when_a_refetch_has_new_bytes_but_the_same_text(author):
    library = Library.objects.create(name="web")
    url = "https://news.example/a"
    ingest_documents([DocumentInput(raw=PAGE.format(STORY).encode(), url=url)], library)
    with_new_ad = PAGE.format(STORY).replace("News index", "Other index").encode()
    changed = PAGE.format(STORY + " Update: the vote was delayed.").encode()

    same = ingest_documents([DocumentInput(raw=with_new_ad, url=url)], library)
    new = ingest_documents([DocumentInput(raw=changed, url=url)], library)

    assert same[0].status == "unchanged"
    assert new[0].status == "new_snapshot"
    assert Source.objects.get().snapshots.count() == 2


def test_it_ingests_a_fetched_page_with_its_http_charset_and_metadata(author):
    from research.providers.fetcher import FetchResult

    body = PAGE.format(STORY.replace("mayor", "maire r\u00e9gional")).encode("latin-1")
    fetched = FetchResult(
        requested_url="http://news.example/x?utm_source=feed",
        final_url="https://news.example/x",
        redirect_chain=("http://news.example/x?utm_source=feed",),
        status=200,
        headers={"content-type": "text/html; charset=ISO-8859-1"},
        declared_content_type="text/html",
        sniffed_content_type="text/html",
        content_type="text/html",
        charset="ISO-8859-1",
        body=body,
    )

    result = ingest_documents([document_from_fetch(fetched, source_type="news")])[0]

    assert result.source_id is not None
    source = Source.objects.get(pk=result.source_id)
    snapshot = source.snapshots.get()
    assert source.canonical_id == "url:https://news.example/x"
    assert source.source_type == "news"
    assert "maire r\u00e9gional" in snapshot.text
    assert snapshot.http_status == 200
    assert snapshot.http_headers == {"content-type": "text/html; charset=ISO-8859-1"}
    assert source.metadata["redirect_chain"] == ["http://news.example/x?utm_source=feed"]


def test_it_imports_an_uploaded_corpus_with_progress_and_bad_lines(author, client):
    import json

    lines = [
        json.dumps({"_id": "a1", "title": "Falls", "text": "Vitamin D reduced falls in a trial."}),
        '{"_id": "a2", "title": "Broken',
        json.dumps({"_id": "a3", "title": "Bones", "text": "Calcium raised bone density."}),
    ]
    corpus = _file("corpus.jsonl", "\n".join(lines).encode(), "application/jsonl")
    library, batch = _queue(author, corpus, library_name="my corpus")
    upload = Upload.objects.get(batch=batch)
    assert upload.kind == "corpus"

    do_ingest_uploads(batch)

    upload.refresh_from_db()
    assert upload.status == "added" and upload.documents_done == upload.documents_total == 3
    assert upload.report["bad_lines"] == [[2, upload.report["bad_lines"][0][1]]]
    assert "not JSON" in upload.report["bad_lines"][0][1]
    assert set(Source.objects.filter(libraries=library).values_list("canonical_id", flat=True)) == {
        f"corpus:upload-{library.code}:a1",
        f"corpus:upload-{library.code}:a3",
    }
    client.force_login(author)
    page = client.get(f"/library/uploads/{batch}/").content.decode()
    assert "3 of 3 documents" in page and "line 2: not JSON" in page
    assert "1 bad line skipped" in page


def test_it_reports_a_file_that_is_no_corpus(author):
    corpus = _file("notes.jsonl", b"just some text\n", "application/jsonl")
    _, batch = _queue(author, corpus)
    do_ingest_uploads(batch)
    upload = Upload.objects.get(batch=batch)
    assert upload.status == "failed" and "line 1: not JSON" in upload.error


def test_it_estimates_the_time_left_from_the_rate_so_far(author):
    from datetime import timedelta

    from django.utils import timezone

    library = Library.objects.create(name="eta", owner=author)
    upload = Upload(library=library, documents_total=1000, documents_done=250)
    upload.started_at = timezone.now() - timedelta(seconds=100)
    assert upload.eta_s is not None and 299 < upload.eta_s < 302


@pytest.mark.django_db
def test_a_batch_page_is_its_uploader_s_and_an_administrator_s_only(
    author, outsider, django_user_model, client
):
    """Staff without permissions saw other users' batches, with private library and file
    names; a staff flag opens the admin, not everyone's uploads."""
    _, batch = _queue(author, _file("board-minutes.txt", b"Private notes."), library_name="hr")
    staff = django_user_model.objects.create_user("staff", password="pw-staff", is_staff=True)
    admin = django_user_model.objects.create_superuser("root", password="pw-root")
    url = f"/library/uploads/{batch}/"
    seen = {}
    for user in (author, outsider, staff, admin):
        client.force_login(user)
        response = client.get(url)
        seen[user.username] = (
            response.status_code,
            "board-minutes.txt" in response.content.decode(),
        )
    assert seen == {
        "author": (200, True),
        "outsider": (404, False),
        "staff": (404, False),
        "root": (200, True),
    }


@pytest.mark.django_db
def test_a_batch_of_large_files_gives_the_worker_back_between_files(author, monkeypatch):
    """50 hostile files in one upload held the shared worker for hours: one job now takes
    small files together and large ones one at a time, starts none past its time slice,
    and the task queues the rest behind what was queued meanwhile (another user's run)."""
    from ledger import tasks
    from ledger.services import uploads
    from ledger.services.ingest import ISOLATE_FROM_BYTES
    from ledger.services.uploads import pending_uploads

    large = b"Paragraph of a long report about budgets and buses.\n\n" * (ISOLATE_FROM_BYTES // 40)
    files = [_file(f"big{n}.txt", large + str(n).encode()) for n in range(3)]
    _, batch = _queue(author, _file("small.txt", b"A short note on the bus budget."), *files)

    done = do_ingest_uploads(batch, slice_s=0)  # the slice is over after the first group
    assert [r.label for r in done] == ["small.txt"]
    assert pending_uploads(batch).count() == 3
    assert set(pending_uploads(batch).values_list("status", flat=True)) == {"queued"}

    deferred: list[str] = []
    monkeypatch.setattr(tasks, "defer_ingest", deferred.append)
    clock = iter(range(0, 10**6, 10**4))  # every look at the clock: 10,000 s later
    monkeypatch.setattr(uploads, "monotonic", lambda: float(next(clock)))
    tasks.ingest_uploads(str(batch))  # at least one file per job, so it always gets on
    assert pending_uploads(batch).count() == 2 and deferred == [str(batch)]
    monkeypatch.setattr(uploads, "monotonic", lambda: 0.0)  # a quick job: the rest at once
    tasks.ingest_uploads(str(batch))
    assert not pending_uploads(batch).exists() and deferred == [str(batch)]
    assert Upload.objects.filter(batch=batch, status="added").count() == 4
