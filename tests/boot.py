"""Loaded with ``-p tests.boot`` before pytest-django reads the settings.

Unit tests use the in-memory channel layer; tests that start daphne or workers in
subprocesses pass CHANNEL_LAYER="" to those processes to get the real Postgres layer.
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("CHANNEL_LAYER", "memory")
# Settings default to production (DEBUG off); the suite runs as a developer's checkout.
os.environ.setdefault("DJANGO_DEBUG", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# A signing key of this test session (created on first use), never the developer's own;
# daphne and workers started by tests inherit it.
os.environ.setdefault(
    "BUNDLE_SIGNING_KEY", os.path.join(tempfile.mkdtemp(prefix="eb-test-key-"), "bundle.pem")
)


def _embedded_was_running() -> bool | None:
    """Whether the embedded Postgres ran before this session (None: an external database)."""
    if os.environ.get("DATABASE_URL"):
        return None
    from config import embedded

    return "running" in embedded.status()


_WAS_RUNNING = _embedded_was_running()


def pytest_unconfigure(config: object) -> None:
    """Stop the embedded Postgres if this test session is what started it."""
    if _WAS_RUNNING is False and os.environ.get("EMBEDDED_PG") == "1":
        from config import embedded

        embedded.stop()
