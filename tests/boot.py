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
# pytest-django creates and drops the throwaway test databases: the embedded server's
# owner role (the application role may not; tests/platform/test_database_roles.py tries it).
os.environ.setdefault("EMBEDDED_PG_ROLE", "owner")
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


def _other_clients() -> int:
    """Client connections to the embedded server other than this process's own."""
    import psycopg

    from config import embedded

    info, _ = embedded._read_postmaster()
    if info is None:
        return 0
    try:
        with psycopg.connect(info.get_uri(), connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchone()
    except psycopg.Error:
        return 0
    return int(row[0]) if row else 0


def pytest_unconfigure(config: object) -> None:
    """Stop the embedded Postgres if this test session started it and no other session
    (a second ``pytest`` in the same checkout) is still connected to it."""
    if _WAS_RUNNING is False and os.environ.get("EMBEDDED_PG") == "1":
        from django.db import connections

        from config import embedded

        connections.close_all()
        if _other_clients() == 0:
            embedded.stop()
