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

Every service runs in a process group of its own and gets SIGTERM when the launcher dies
(``PR_SET_PDEATHSIG``), as do uvicorn's worker processes when their uvicorn dies. When a
service exits, whatever it left in its group is stopped before it is started again, so a
killed web server leaves no orphans holding the port; a port held by another program is
reported, and waited for, instead of failing on "address already in use".

``python -m config.launcher web`` runs only the web server command (docker-compose's
``web`` service), with the same options.
"""

from __future__ import annotations

import contextlib
import fcntl
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO

from config import embedded
from config.serve import die_with_parent, web_command, web_processes

__all__ = ["main", "web_application", "web_command", "web_main", "web_processes"]

BASE_DIR = embedded.BASE_DIR
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 60.0
STABLE_AFTER_S = 60.0
LEFTOVER_GRACE_S = 15.0  # uvicorn's graceful shutdown takes up to 10 s
PORT_WAIT_S = 15.0


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


def group_members(group: int) -> list[int]:
    """The live processes of process group ``group`` (from /proc; zombies left out)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, _, pgrp = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if state != "Z" and int(pgrp) == group:
            members.append(int(entry.name))
    return sorted(members)


def _signal_group(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # gone, or not ours
        os.killpg(group, sig)


def port_free(host: str, port: str) -> bool:
    """Whether a server could listen on host:port now (uvicorn, too, sets SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host.strip("[]"), int(port)))
        except OSError:
            return False
    return True


def wait_for_port(host: str, port: str, timeout_s: float = PORT_WAIT_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while not port_free(host, port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.3)
    return True


@dataclass
class Service:
    """One supervised process: restarted after a back-off whenever it exits.

    It runs in a process group of its own, so what it leaves behind when it dies (the
    web server's worker processes) can be found and stopped before it starts again. A
    service with an ``address`` starts only once nothing else listens there.
    """

    name: str
    command: list[str]
    env: dict[str, str]
    address: tuple[str, str] | None = None
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    backoff_s: float = BACKOFF_FIRST_S
    restart_at: float | None = None
    restarts: int = 0
    log: list[str] = field(default_factory=list)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.command,
            env=self.env,
            cwd=BASE_DIR,
            process_group=0,
            preexec_fn=partial(die_with_parent, os.getpid()),
        )
        self.started_at = time.monotonic()
        self.restart_at = None

    def check(self, now: float) -> None:
        """Notice an exit and schedule the restart; restart when its time has come."""
        if self.restart_at is not None:
            if now >= self.restart_at:
                self._restart(now)
            return
        if self.proc is None or self.proc.poll() is None:
            if now - self.started_at >= STABLE_AFTER_S:
                self.backoff_s = BACKOFF_FIRST_S
            return
        self._schedule(now, f"{self.name} exited with code {self.proc.returncode}")
        self.stop_leftovers()

    def _restart(self, now: float) -> None:
        if self.address is not None and not port_free(*self.address):
            host, port = self.address
            self._schedule(now, f"{self.name}: port {port} on {host} is in use by another program")
            return
        self.restarts += 1
        self.start()

    def _schedule(self, now: float, why: str) -> None:
        message = f"{why}; restarting in {self.backoff_s:.0f} s"
        self._say(message)
        self.restart_at = now + self.backoff_s
        self.backoff_s = min(self.backoff_s * 2, BACKOFF_MAX_S)

    def _say(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)
        self.log.append(message)

    def stop_leftovers(self, grace_s: float = LEFTOVER_GRACE_S) -> None:
        """Stop what the exited process left in its group: SIGTERM, SIGKILL after ``grace_s``."""
        assert self.proc is not None
        group = self.proc.pid
        left = group_members(group)
        if not left:
            return
        self._say(f"{self.name} left pid {', '.join(map(str, left))} running; stopping it all")
        _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while group_members(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        if group_members(group):
            _signal_group(group, signal.SIGKILL)  # whatever ignored SIGTERM

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
        self.stop_leftovers()


def services(env: dict[str, str], host: str, port: str) -> list[Service]:
    workers = int(env.get("EB_WORKERS", "1"))
    web = Service("web server", web_command(env, host, port), env, address=(host, port))
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
    if not wait_for_port(host, port):
        print(f"port {port} on {host} is in use: stop its holder or set EB_PORT", file=sys.stderr)
        lock.close()
        return 1
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


def web_application() -> object:
    """The ASGI application, made in each uvicorn worker process (``uvicorn --factory``).

    A worker process first arranges to die with the uvicorn process that spawned it, so a
    killed uvicorn leaves no worker serving unsupervised.
    """
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:
        die_with_parent(parent.pid)
    from config.asgi import application

    return application


def web_main() -> int:
    """Only the web server, in the foreground (docker-compose's ``web`` service)."""
    env = _child_env()
    command = web_command(env, env.get("EB_HOST", "127.0.0.1"), env.get("EB_PORT", "8000"))
    os.execvpe(command[0], command, env)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(web_main() if sys.argv[1:] == ["web"] else main())
