"""``make run``: database, migrations, first admin, then the web server and workers.

1. Take an exclusive lock on the data folder, so a second launcher says "already
   running" instead of starting a second server on the same data.
2. Start (or attach to) the embedded Postgres unless DATABASE_URL is set.
3. Migrate, collect static files when DEBUG is off, create the first admin.
4. Start the web server (uvicorn, ``EB_WEB_PROCESSES`` processes) and ``EB_WORKERS``
   procrastinate workers; print the URL.
5. Supervise: a service that exits is started again after a back-off (1 s, doubling to
   60 s; reset once it has stayed up for a minute), so one crashed worker never takes
   the web server or the database down. Ctrl-C (SIGINT) or SIGTERM stops everything,
   also when the launcher was started with SIGINT ignored (``cmd &`` in a script).

``python -m config.launcher web`` runs only the web server command (docker-compose's
``web`` service), with the same options.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from config import embedded
from config.serve import web_command, web_processes

__all__ = ["main", "web_command", "web_main", "web_processes"]

BASE_DIR = embedded.BASE_DIR
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 60.0
STABLE_AFTER_S = 60.0


def _lock_file() -> Path:
    folder = Path(os.environ.get("EB_STATE_DIR", BASE_DIR / ".data")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "run.lock"


def acquire_lock() -> IO[str] | None:
    handle = _lock_file().open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        print(f"Evidence Bureau is already running: {handle.read().strip()}", file=sys.stderr)
        handle.close()
        return None
    return handle


def _manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), *args], env=env, check=True)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DJANGO_DEBUG", "true")  # a local checkout: explicitly developing
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _debug(env: dict[str, str]) -> bool:
    return env.get("DJANGO_DEBUG", "false").strip().lower() in {"1", "true", "yes", "on"}


def prepare(env: dict[str, str]) -> None:
    _manage("migrate", "--no-input", "-v", "0", env=env)
    if not _debug(env):
        _manage("collectstatic", "--no-input", "-v", "0", env=env)
    _manage("ensureadmin", env=env)


def worker_command(n: int) -> list[str]:
    name = f"worker-{os.getpid()}-{n}"
    return [sys.executable, str(BASE_DIR / "manage.py"), "procrastinate", "worker", "--name", name]


@dataclass
class Service:
    """One supervised process: restarted after a back-off whenever it exits."""

    name: str
    command: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    backoff_s: float = BACKOFF_FIRST_S
    restart_at: float | None = None
    restarts: int = 0
    log: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.proc = subprocess.Popen(self.command, env=self.env, cwd=BASE_DIR)
        self.started_at = time.monotonic()
        self.restart_at = None

    def check(self, now: float) -> None:
        """Notice an exit and schedule the restart; restart when its time has come."""
        if self.restart_at is not None:
            if now >= self.restart_at:
                self.restarts += 1
                self.start()
            return
        if self.proc is None or self.proc.poll() is None:
            if now - self.started_at >= STABLE_AFTER_S:
                self.backoff_s = BACKOFF_FIRST_S
            return
        code = self.proc.returncode
        message = f"{self.name} exited with code {code}; restarting in {self.backoff_s:.0f} s"
        print(message, file=sys.stderr, flush=True)
        self.log.append(message)
        self.restart_at = now + self.backoff_s
        self.backoff_s = min(self.backoff_s * 2, BACKOFF_MAX_S)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def wait(self) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def services(env: dict[str, str], host: str, port: str) -> list[Service]:
    workers = int(env.get("EB_WORKERS", "1"))
    web = Service("web server", web_command(env, host, port), env)
    return [web, *(Service(f"worker {n}", worker_command(n), env) for n in range(workers))]


def wait_until_up(host: str, port: str, timeout_s: float = 60.0) -> bool:
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def supervise(running: list[Service], poll_s: float = 0.5) -> None:
    """Keep every service up until interrupted (KeyboardInterrupt ends it)."""
    while True:
        now = time.monotonic()
        for service in running:
            service.check(now)
        time.sleep(poll_s)


def stop(running: list[Service]) -> None:
    for service in running:
        service.stop()
    for service in running:
        service.wait()


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main() -> int:
    # Set before any child starts: a shell script's ``cmd &`` starts it with SIGINT
    # ignored, which Python and every child would otherwise inherit, and Ctrl-C or
    # ``kill -INT`` would then stop nothing.
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    lock = acquire_lock()
    if lock is None:
        return 1
    host = os.environ.get("EB_HOST", "127.0.0.1")
    port = os.environ.get("EB_PORT", "8000")
    started_db = False
    if not os.environ.get("DATABASE_URL"):
        started_db = "running" not in embedded.status()
        os.environ["DATABASE_URL"] = embedded.start()
        os.environ["EMBEDDED_PG"] = "1"
    env = _child_env()
    prepare(env)
    running = services(env, host, port)
    for service in running:
        service.start()
    url = f"http://{host}:{port}/"
    lock.seek(0)
    lock.truncate()
    lock.write(f"pid {os.getpid()} at {url}\n")
    lock.flush()
    try:
        if not wait_until_up(host, port):
            print("the web server did not answer on /healthz within 60 s", file=sys.stderr)
            return 1
        mode = "development mode (DEBUG on)" if _debug(env) else "DEBUG off"
        print(f"Evidence Bureau is running at {url}  ({mode}; Ctrl-C to stop)", flush=True)
        supervise(running)
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        stop(running)
        if started_db and os.environ.get("EB_KEEP_DB") != "1":
            embedded.stop()
        lock.close()


def web_main() -> int:
    """Only the web server, in the foreground (docker-compose's ``web`` service)."""
    env = _child_env()
    command = web_command(env, env.get("EB_HOST", "127.0.0.1"), env.get("EB_PORT", "8000"))
    os.execvpe(command[0], command, env)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(web_main() if sys.argv[1:] == ["web"] else main())
