"""Error pages a person can read, and no debug page for anyone but staff.

With DEBUG off Django renders ``templates/403.html``, ``404.html`` and ``500.html``.
With DEBUG on (``make run`` on a developer's machine) Django's technical 404 and 500
pages list URL patterns and settings: :class:`HideDebugPagesMiddleware` replaces them
with the styled pages for everyone who is not staff.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

STYLED = {404: "404.html", 500: "500.html"}


class HideDebugPagesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        template = STYLED.get(response.status_code)
        if template is None or not settings.DEBUG or getattr(response, "styled", False):
            return response
        user = getattr(request, "user", None)
        if user is not None and user.is_staff:
            return response
        styled = HttpResponse(
            render_to_string(template, {"request_path": request.path}, request=request),
            status=response.status_code,
        )
        styled.styled = True  # type: ignore[attr-defined]
        return styled
