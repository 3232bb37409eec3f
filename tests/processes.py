"""Real processes for tests: workers and daphne against the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.db import connection

BASE_DIR = Path(__file__).resolve().parent.parent


def database_url() -> str:
    """The URL of the database this test session uses (the test database)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else ":")
    host = s["HOST"]
    if host.startswith("/"):
        return f"postgresql://{auth}@/{s['NAME']}?host={host}"
    port = f":{s['PORT']}" if s["PORT"] else ""
    return f"postgresql://{auth}@{host}{port}/{s['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    # Browser tests allow sync ORM calls beside Playwright in this process; children
    # run as production does, with async safety on.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(
        DATABASE_URL=database_url(),
        OPENBLAS_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
        HF_HUB_OFFLINE="1",
    )
    env.update(extra)
    return env


def start_worker(*args: str, **extra_env: str) -> subprocess.Popen[str]:
    """A procrastinate worker process; ``--one-shot`` makes it exit when the queue is empty."""
    return subprocess.Popen(
        [sys.executable, str(BASE_DIR / "manage.py"), "procrastinate", "worker", *args],
        env=child_env(**extra_env),
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_daphne(port: int, **extra_env: str) -> subprocess.Popen[str]:
    """The project's ASGI app under daphne on 127.0.0.1:port, ready when this returns."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daphne",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "config.asgi:application",
        ],
        env=child_env(**extra_env),
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for_http(f"http://127.0.0.1:{port}/healthz", proc)
    return proc


def start_web(port: int, processes: int = 1, **extra_env: str) -> subprocess.Popen[str]:
    """The production web server (``config.launcher.web_command``: uvicorn), ready on return."""
    from config.serve import web_command

    env = child_env(EB_WEB_PROCESSES=str(processes), **extra_env)
    proc = subprocess.Popen(
        web_command(env, "127.0.0.1", str(port)),
        env=env,
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_for_http(f"http://127.0.0.1:{port}/healthz", proc)
    return proc


def wait_for_http(url: str, proc: subprocess.Popen[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise RuntimeError(f"process exited early ({proc.returncode}): {out[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout_s} s")


def stop(proc: subprocess.Popen[str], timeout_s: float = 15.0) -> str:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.stdout.read() if proc.stdout else ""
