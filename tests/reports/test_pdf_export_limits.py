"""PDF exports refused in words: one printing per user (429), a full printer (503), and
no Chromium (503 on the web, one line from ``exportreport``) — nothing recorded then."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.urls import reverse

from reports.build import do_build_report
from reports.export import _printing_slot
from reports.exports import pdf
from reports.models import Export

BUSY = "You already have a PDF export printing: wait until it is downloaded, then export again"


@pytest.fixture
def report(scene, run, author):
    return do_build_report(run, author)


@contextmanager
def printing_elsewhere(user):
    """The user's PDF slot held on another connection, as by an export in another process."""
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with _printing_slot("pdf", user):
                held.set()
                done.wait(30)
        finally:
            connection.close()  # this thread's own

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(10)
    try:
        yield
    finally:
        done.set()
        thread.join()


def export_pdf(client, report):
    return client.get(reverse("review-export-report", args=[report.code, "pdf"]))


@pytest.mark.django_db
def test_it_refuses_a_second_pdf_of_one_user_while_the_first_prints(client, author, report):
    client.force_login(author)
    with printing_elsewhere(author):
        response = export_pdf(client, report)
        assert response.status_code == 429
        assert response["Retry-After"] == "5"
        assert f'<p id="not-exported">{BUSY}</p>' in response.content.decode()
        assert 'class="topbar"' in response.content.decode()  # the app's own page
        other = client.get(reverse("review-export-report", args=[report.code, "md"]))
        assert other.status_code == 200  # only PDFs are limited
    assert list(Export.objects.values_list("format", flat=True)) == ["md"]
    response = export_pdf(client, report)  # the first one done: nothing was lost
    assert response.status_code == 200
    assert response.content.startswith(b"%PDF-")


@pytest.mark.django_db
def test_it_prints_for_another_user_while_one_user_is_printing(client, author, reviewer, report):
    client.force_login(reviewer)
    with printing_elsewhere(author):
        response = export_pdf(client, report)
    assert response.status_code == 200
    assert Export.objects.get().created_by == reviewer


@pytest.mark.django_db
def test_it_says_the_printer_is_busy_after_waiting_the_bound(client, author, report, settings):
    settings.PDF_MAX_CONCURRENT, settings.PDF_QUEUE_WAIT_S = 1, 0.2
    client.force_login(author)
    with pdf.PRINTER.slots.hold(1, 0):
        response = export_pdf(client, report)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "PDF export is busy" in response.content.decode()
    assert not Export.objects.exists()
    with printing_elsewhere(author):  # the refused export gave its user's slot back
        pass


@pytest.mark.django_db
def test_it_says_which_package_to_install_when_chromium_is_missing(
    client, author, report, settings, tmp_path
):
    settings.CHROMIUM_PATH = str(tmp_path / "chromium")
    client.force_login(author)
    response = export_pdf(client, report)
    assert response.status_code == 503
    assert "sudo apt-get install chromium" in response.content.decode()
    with pytest.raises(CommandError) as failed:
        call_command(
            "exportreport", str(report.code), "--format", "pdf", "--out", str(tmp_path / "r.pdf")
        )
    assert str(failed.value) == pdf.MISSING.format(path=tmp_path / "chromium")
    assert not (tmp_path / "r.pdf").exists()
    assert not Export.objects.exists()


@pytest.mark.django_db
def test_it_refuses_a_scripted_pdf_for_a_user_already_printing(author, report, tmp_path):
    with printing_elsewhere(author), pytest.raises(CommandError, match=BUSY):
        call_command(
            "exportreport",
            str(report.code),
            "--format",
            "pdf",
            "--out",
            str(tmp_path / "r.pdf"),
            "--user",
            "author",
        )
