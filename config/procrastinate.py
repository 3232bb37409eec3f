"""The procrastinate app: Django contrib wires it to the default database."""

from __future__ import annotations

from typing import Any


def on_app_ready(app: Any) -> None:
    """Hook for app-wide task defaults; tasks live in each app's tasks.py."""
    return None
