from __future__ import annotations

from django.urls import path

from research.consumers import RunProgressConsumer

websocket_urlpatterns = [
    path("ws/runs/<uuid:code>/", RunProgressConsumer.as_asgi()),
]
