"""Worker and daphne processes for run tests, logging to files (a pipe could fill and block)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from research.models import Run
from tests.processes import BASE_DIR, child_env, free_port, wait_for_http

# The postgres channel layer: live progress crosses from the worker to daphne.
LIVE_ENV = {"CHANNEL_LAYER": "postgres", "LOG_LEVEL": "WARNING"}


def spawn(args: list[str], name: str, **env: str) -> tuple[subprocess.Popen[bytes], Path]:
    log = Path(tempfile.mkstemp(prefix=f"{name}-", suffix=".log")[1])
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, *args],
            env=child_env(**LIVE_ENV, **env),
            cwd=BASE_DIR,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return proc, log


def start_worker(name: str, **env: str) -> tuple[subprocess.Popen[bytes], Path]:
    """A worker; ``env``: settings of its own (e.g. ``FETCH_ALLOWED_HOSTS``)."""
    args = [str(BASE_DIR / "manage.py"), "procrastinate", "worker", "--name", name]
    return spawn(args, name, **env)


def start_daphne() -> tuple[subprocess.Popen[bytes], Path, str]:
    port = free_port()
    proc, log = spawn(
        ["-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"], "daphne"
    )
    wait_for_http(f"http://127.0.0.1:{port}/healthz", proc)  # type: ignore[arg-type]
    return proc, log, f"http://127.0.0.1:{port}"


def finish(proc: subprocess.Popen[bytes], log: Path) -> str:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    text = log.read_text(errors="replace")
    log.unlink(missing_ok=True)
    return text[-4000:]


def wait_for_run(run: Run, states: set[str], timeout_s: float, *procs) -> Run:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.state in states:
            return run
        for proc in procs:
            assert proc.poll() is None, f"a process exited ({proc.returncode})"
        time.sleep(0.5)
    raise AssertionError(f"run still {run.state} after {timeout_s} s")
