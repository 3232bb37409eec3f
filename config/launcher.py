"""``make run``: database, migrations, first admin, then daphne and a worker.

1. Take an exclusive lock on the data folder, so a second launcher says "already
   running" instead of starting a second server on the same data.
2. Start (or attach to) the embedded Postgres unless DATABASE_URL is set.
3. Migrate, collect static files when DEBUG is off, create the first admin.
4. Start daphne and one procrastinate worker; print the URL; stop both on Ctrl-C.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from config import embedded

BASE_DIR = embedded.BASE_DIR


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
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def prepare(env: dict[str, str]) -> None:
    _manage("migrate", "--no-input", "-v", "0", env=env)
    if env.get("DJANGO_DEBUG", "true").lower() in {"0", "false", "no", "off"}:
        _manage("collectstatic", "--no-input", "-v", "0", env=env)
    _manage("ensureadmin", env=env)


def start_services(env: dict[str, str], host: str, port: str) -> list[subprocess.Popen[bytes]]:
    daphne = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", host, "-p", port, "config.asgi:application"],
        env=env,
        cwd=BASE_DIR,
    )
    workers = int(env.get("EB_WORKERS", "1"))
    procs = [daphne]
    for n in range(workers):
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    str(BASE_DIR / "manage.py"),
                    "procrastinate",
                    "worker",
                    "--name",
                    f"worker-{os.getpid()}-{n}",
                ],
                env=env,
                cwd=BASE_DIR,
            )
        )
    return procs


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


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    lock = acquire_lock()
    if lock is None:
        return 1
    host = os.environ.get("EB_HOST", "127.0.0.1")
    port = os.environ.get("EB_PORT", "8000")
    started_db = False
    if not os.environ.get("DATABASE_URL"):
        started_db = "running" not in embedded.status()
        os.environ["DATABASE_URL"] = embedded.start()
    env = _child_env()
    prepare(env)
    procs = start_services(env, host, port)
    url = f"http://{host}:{port}/"
    lock.seek(0)
    lock.truncate()
    lock.write(f"pid {os.getpid()} at {url}\n")
    lock.flush()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        if not wait_until_up(host, port):
            print("daphne did not answer on /healthz within 60 s", file=sys.stderr)
            return 1
        print(f"Evidence Bureau is running at {url}  (Ctrl-C to stop)", flush=True)
        while all(proc.poll() is None for proc in procs):
            time.sleep(0.5)
        print("a service exited; stopping the others", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stop(procs)
        if started_db and os.environ.get("EB_KEEP_DB") != "1":
            embedded.stop()
        lock.close()


if __name__ == "__main__":
    sys.exit(main())
