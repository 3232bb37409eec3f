"""Typed request for views (django-htmx adds ``request.htmx``)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class AuthedHttpRequest(HttpRequest):
    htmx: HtmxDetails
    user: User
