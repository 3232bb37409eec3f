"""Error pages a person can read, and no debug page for anyone but staff.

With DEBUG off Django renders ``templates/400.html``, ``403.html``, ``404.html`` and
``500.html``. With DEBUG on (``make run`` on a developer's machine) Django's technical
pages list URL patterns, settings, request headers and the traceback; strangers must
never see them, on any status:

- 400 (a wrong ``Host`` header, too many fields or files) and 500: Django builds these
  with the exception reporter, :class:`StaffOnlyExceptionReporter` (``settings
  DEFAULT_EXCEPTION_REPORTER``), which writes the plain page unless the request's user
  is staff. It is the only way in: a wrong Host is refused by ``CommonMiddleware``
  before any later middleware could replace the page.
- 403 for a CSRF failure: :func:`csrf_failure` (``CSRF_FAILURE_VIEW``) never shows
  Django's help section.
- 404: :class:`HideDebugPagesMiddleware` replaces the technical 404 for non-staff.

Error mails to administrators (``is_email``) keep the whole report.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.views.debug import ExceptionReporter

STYLED = {404: "404.html", 500: "500.html"}
# Standalone pages (no request context): a 400 may come from a request whose Host
# header is refused, and anything that asks the request for its host raises again.
PLAIN = {
    400: ("400.html", "Bad request (400): the server could not read this request."),
    500: ("500.html", "Server error (500): the server could not answer this request."),
}


def is_staff(request: HttpRequest | None) -> bool:
    """Whether the request is a signed-in staff member's (False when it cannot tell)."""
    user = getattr(request, "user", None)  # absent before AuthenticationMiddleware ran
    try:
        return bool(user is not None and user.is_authenticated and user.is_staff)
    except Exception:  # the session or user could not be loaded (the database is down)
        return False


class StaffOnlyExceptionReporter(ExceptionReporter):
    """Django's technical 400 and 500 pages for staff; the plain page for everyone else."""

    def _status(self) -> int:
        suspicious = (SuspiciousOperation, BadRequest)
        return 400 if self.exc_type and issubclass(self.exc_type, suspicious) else 500

    def _plain(self) -> bool:
        return not self.is_email and not is_staff(self.request)

    def get_traceback_html(self) -> SafeString:
        if self._plain():
            return render_to_string(PLAIN[self._status()][0])
        return super().get_traceback_html()

    def get_traceback_text(self) -> SafeString:
        if self._plain():
            return SafeString(PLAIN[self._status()][1] + "\n")  # plain text, no markup
        return super().get_traceback_text()


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A refused form, in words a person can act on (never Django's DEBUG help text)."""
    message = (
        "This form could not be accepted: its CSRF security token was missing or had "
        "expired. Reload the page and send it again; your browser must accept cookies "
        "from this site."
    )
    return HttpResponseForbidden(
        render_to_string("403.html", {"exception": message}, request=request)
    )


class HideDebugPagesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        template = STYLED.get(response.status_code)
        if template is None or not settings.DEBUG or getattr(response, "styled", False):
            return response
        if is_staff(request):
            return response
        styled = HttpResponse(
            render_to_string(template, {"request_path": request.path}, request=request),
            status=response.status_code,
        )
        styled.styled = True  # type: ignore[attr-defined]
        return styled
