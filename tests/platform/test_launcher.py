"""`make run`'s launcher: comes up, serves the login page, keeps data, refuses a twin."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.processes import BASE_DIR, free_port

pytestmark = pytest.mark.slow


def _env(tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CHANNEL_LAYER"}}
    env.update(
        EMBEDDED_PG_DIR=str(tmp_path / "pg"),
        EB_STATE_DIR=str(tmp_path / "state"),
        EB_PORT=str(port),
        PYTHONUNBUFFERED="1",
    )
    return env


def _launch(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "config.launcher"],
        env=env,
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for_url(proc: subprocess.Popen[str], timeout_s: float = 240) -> tuple[str, str]:
    """Read the launcher's output until it prints the URL; return (url, all output)."""
    assert proc.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        if "is running at " in line:
            return line.split("is running at ", 1)[1].split()[0], "".join(seen)
    raise AssertionError("launcher never printed its URL:\n" + "".join(seen))


def _shell(env: dict[str, str], code: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)


def test_it_runs_serves_login_keeps_data_and_refuses_a_second_instance(tmp_path):
    env = _env(tmp_path, free_port())
    first = _launch(env)
    try:
        url, output = _wait_for_url(first)
        assert "with password: " in output  # the first admin, generated, shown once
        with urllib.request.urlopen(url + "accounts/login/", timeout=10) as response:
            assert response.status == 200
            assert b"Log in" in response.read()
        twin = subprocess.run(
            [sys.executable, "-m", "config.launcher"],
            env=env,
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert twin.returncode == 1
        assert "already running" in twin.stderr
        _shell(env, "from ledger.models import Library; Library.objects.create(name='kept')")
    finally:
        _stop(first)

    second = _launch(env)
    try:
        _, output = _wait_for_url(second)
        assert "with password: " not in output  # no second admin, no password reprinted
        count = _shell(
            env,
            "from ledger.models import Library; print(Library.objects.filter(name='kept').count())",
        )
        assert count == "1"
    finally:
        _stop(second)
