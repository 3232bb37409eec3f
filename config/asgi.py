"""ASGI entry point: HTTP through the body-size limit and Django, websockets through channels."""

from __future__ import annotations

import os

from config.embedded import ensure_database_url

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
ensure_database_url()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.asgi import get_asgi_application  # noqa: E402

from config.limits import RequestSizeLimit  # noqa: E402

django_asgi_app = get_asgi_application()

from research.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Bodies over the limit are refused with 413 before anything reads them.
        "http": RequestSizeLimit(
            django_asgi_app,
            default=settings.REQUEST_MAX_BYTES,
            upload=settings.UPLOAD_REQUEST_MAX_BYTES,
            session_cookie=settings.SESSION_COOKIE_NAME,
        ),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
