"""With DEBUG on, a stranger gets the plain error page on every status; staff keep Django's.

Django renders its technical pages (settings, database path, request headers, traceback)
for a wrong Host header or too many uploaded files (400), a CSRF failure (403), a missing
page (404) and an error (500). ``config.errors`` shows them to staff only.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

# What Django's technical pages print, and none of the plain ones does.
DEBUG_MARKS = (
    "Traceback",
    "DATABASES",
    "Request information",
    "DEBUG = True",
    "URLconf",
    "INGEST_MAX",
    "Exception Value",
)


def _plain(response, status: int) -> str:
    assert response.status_code == status
    body: str = response.content.decode()
    for mark in DEBUG_MARKS:
        assert mark not in body, f"{status} page shows {mark!r}"
    return body


@pytest.fixture
def debug(settings):
    settings.DEBUG = True
    return settings


def _explode(view, request, *args, **kwargs):
    raise RuntimeError("a bug with a secret in its message")


@pytest.mark.django_db
class TestStrangers:
    def test_a_wrong_host_header_gets_the_plain_400(self, debug):
        response = Client().get("/accounts/login/", HTTP_HOST="attacker.example")
        body = _plain(response, 400)
        assert "Bad request" in body

    def test_a_wrong_host_asking_for_text_gets_one_plain_line(self, debug):
        response = Client().get(
            "/accounts/login/", HTTP_HOST="attacker.example", HTTP_ACCEPT="text/plain"
        )
        body = _plain(response, 400)
        assert response["Content-Type"].startswith("text/plain")
        assert body.count("\n") <= 1

    def test_too_many_files_gets_the_plain_400(self, debug, client, author):
        debug.DATA_UPLOAD_MAX_NUMBER_FILES = 10
        client.force_login(author)
        files = [SimpleUploadedFile(f"f{n}.txt", b"x") for n in range(12)]
        response = client.post(reverse("login"), {"files": files})
        _plain(response, 400)

    def test_a_csrf_failure_gets_the_plain_403(self, debug):
        response = Client(enforce_csrf_checks=True).post(
            reverse("login"), {"username": "x", "password": "y"}
        )
        body = _plain(response, 403)
        assert "CSRF" in body  # says what went wrong, in the app's words
        assert "help section" not in body

    def test_a_missing_page_gets_the_plain_404(self, debug):
        _plain(Client().get("/no/such/page/"), 404)

    def test_an_error_gets_the_plain_500(self, debug, monkeypatch):
        monkeypatch.setattr("django.contrib.auth.views.LoginView.get", _explode)
        response = Client(raise_request_exception=False).get(reverse("login"))
        body = _plain(response, 500)
        assert "secret in its message" not in body
        assert "Something went wrong" in body and "Back to your plans" in body

    def test_a_signed_in_researcher_is_a_stranger_too(self, debug, client, author, monkeypatch):
        monkeypatch.setattr("django.contrib.auth.views.LoginView.get", _explode)
        client.force_login(author)
        client.raise_request_exception = False
        _plain(client.get(reverse("login")), 500)


@pytest.mark.django_db
def test_staff_keep_the_technical_500(debug, client, admin_user, monkeypatch):
    monkeypatch.setattr("django.contrib.auth.views.LoginView.get", _explode)
    client.force_login(admin_user)
    client.raise_request_exception = False
    response = client.get(reverse("login"))
    assert response.status_code == 500
    assert "secret in its message" in response.content.decode()


@pytest.mark.django_db
def test_an_error_mail_keeps_the_traceback(debug, rf):
    import sys

    from config.errors import StaffOnlyExceptionReporter

    try:
        raise RuntimeError("for the administrators")
    except RuntimeError:
        info = sys.exc_info()
    reporter = StaffOnlyExceptionReporter(rf.get("/"), info[0], info[1], info[2], is_email=True)
    assert "for the administrators" in reporter.get_traceback_text()
