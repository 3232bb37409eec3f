"""WSGI entry point (admin tooling; the app itself is served by daphne over ASGI)."""

from __future__ import annotations

import os

from config.embedded import ensure_database_url

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
ensure_database_url()

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
