"""``bench_load --clients N --seconds S``: N logged-in clients on ledger and capsule pages.

1. Builds a scratch plan and run with ``--claims`` claims (``bench_ledger``'s builder),
   owned by a scratch user, and one session per client (deleted afterwards).
2. Starts the production web server on a free loopback port with DEBUG off: uvicorn
   with ``--processes`` processes (``config.launcher.web_command``), or one daphne
   process (``--server daphne``, the server before issue 17) for comparison.
3. Each client (asyncio + httpx, its own session cookie) requests the run's ledger page
   and random claim capsule pages in a closed loop until ``--seconds`` have passed or
   ``--max-requests`` were sent; a non-200 answer or a timeout counts as an error.
4. Prints ``p50_ms``, ``p95_ms``, ``max_ms``, ``errors``, ``requests_per_s`` (plus the
   request count, processes and the 1-minute load average when it started) and
   ``server_cpu_ms_per_request``: the CPU time the web server's processes used, per
   request served — what a page costs, whatever else the machine is doing.

Loopback only: the server is started here, on 127.0.0.1, and nothing else is contacted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.urls import reverse

from config.embedded import BASE_DIR
from ledger.models import Claim
from research.models import Run
from review.management.commands.bench_ledger import build_run, delete_run, scratch_user

REQUEST_TIMEOUT_S = 30.0


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    sent: int = 0
    statuses: dict[int | str, int] = field(default_factory=dict)  # what the errors were


class Command(BaseCommand):
    help = "Load the ledger and capsule pages with N logged-in clients; print p50/p95/max."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--clients", type=int, default=50)
        parser.add_argument("--seconds", type=float, default=60.0)
        parser.add_argument("--processes", type=int, default=4, help="uvicorn processes")
        parser.add_argument("--server", choices=["uvicorn", "daphne"], default="uvicorn")
        parser.add_argument("--claims", type=int, default=300)
        parser.add_argument("--max-requests", type=int, default=200_000)
        parser.add_argument("--json", dest="json_out", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        if not 1 <= options["clients"] <= 1000 or not 0 < options["seconds"] <= 3600:
            raise CommandError("--clients must be 1..1000 and --seconds 0..3600 (bounded load)")
        logging.getLogger("httpx").setLevel(logging.WARNING)
        call_command("migrate", verbosity=0)  # prepares its own database
        user = scratch_user()
        run = build_run(user, options["claims"])
        sessions = [_session(user) for _ in range(options["clients"])]
        server = None
        try:
            server, base = _start_server(options["server"], options["processes"])
            load = os.getloadavg()[0]
            cpu_before = _cpu_seconds(server.pid)
            figures = asyncio.run(_load(base, _paths(run), sessions, options))
            figures["server_cpu_ms_per_request"] = round(
                1000 * (_cpu_seconds(server.pid) - cpu_before) / max(1, figures["requests"]), 2
            )
        finally:
            if server is not None:
                _stop(server)
            for key in sessions:
                SessionStore(session_key=key).delete()
            delete_run(run)
        figures |= {
            "processes": options["processes"] if options["server"] == "uvicorn" else 1,
            "clients": options["clients"],
            "load_avg_1m": round(load, 2),
        }
        for key, value in figures.items():
            if not isinstance(value, dict):
                self.stdout.write(f"{key}: {value}")
        if figures["error_kinds"]:
            self.stderr.write(
                f"errors by kind: {figures['error_kinds']} (server log: "
                f"{BASE_DIR / '.data' / 'bench_load_server.log'})"
            )
        if options["json_out"]:
            with open(options["json_out"], "w", encoding="utf-8") as out:
                json.dump({**figures, "server": options["server"]}, out, indent=2)


def _session(user: Any) -> str:
    """A logged-in session, as the login view would make it."""
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    assert store.session_key is not None
    return store.session_key


def _database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else ":")
    if str(s["HOST"]).startswith("/"):
        return f"postgresql://{auth}@/{s['NAME']}?host={s['HOST']}"
    port = f":{s['PORT']}" if s["PORT"] else ""
    return f"postgresql://{auth}@{s['HOST']}{port}/{s['NAME']}"


def _server_env(processes: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=_database_url(),
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=settings.SECRET_KEY,  # the sessions' auth hashes depend on it
        DJANGO_SSL_REDIRECT="false",
        DJANGO_SECURE_COOKIES="false",
        DJANGO_HSTS_SECONDS="0",
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        EB_WEB_PROCESSES=str(processes),
        OPENBLAS_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def _start_server(kind: str, processes: int) -> tuple[subprocess.Popen[bytes], str]:
    from config.serve import web_command

    env = _server_env(processes)
    subprocess.run(
        [sys.executable, str(BASE_DIR / "manage.py"), "collectstatic", "--no-input", "-v", "0"],
        env=env,
        check=True,
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    if kind == "daphne":
        command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", port]
        command.append("config.asgi:application")
    else:
        command = web_command(env, "127.0.0.1", port)
    log = open(BASE_DIR / ".data" / "bench_load_server.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(command, env=env, cwd=BASE_DIR, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2):
                return server, base
        except OSError:
            time.sleep(0.3)
    _stop(server)
    raise CommandError(f"the {kind} server did not answer on {base}/healthz within 60 s")


def _cpu_seconds(root: int) -> float:
    """CPU time (user + system) used so far by process ``root`` and its descendants (the
    web server's worker processes); 0.0 where /proc is not available."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    total = 0.0
    for pid, seconds in used.items():
        walk = pid
        while walk > 1 and walk != root:
            walk = parents.get(walk, 0)
        total += seconds if walk == root else 0.0
    return total


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _paths(run: Run) -> tuple[str, list[str]]:
    """The run's ledger page and every claim's capsule page."""
    codes = Claim.objects.filter(run=run).values_list("code", flat=True)
    return reverse("review-show-ledger", args=[run.code]), [
        reverse("review-show-claim", args=[code]) for code in codes
    ]


async def _load(
    base: str, paths: tuple[str, list[str]], sessions: list[str], options: dict[str, Any]
) -> dict[str, Any]:
    import httpx

    ledger, claims = paths
    tally = Tally()
    started = time.monotonic()
    deadline = started + options["seconds"]

    async def client(session: str, seed: int) -> None:
        rng = random.Random(seed)
        cookies = {settings.SESSION_COOKIE_NAME: session}
        async with httpx.AsyncClient(
            base_url=base, cookies=cookies, timeout=REQUEST_TIMEOUT_S, follow_redirects=False
        ) as http:
            while time.monotonic() < deadline and tally.sent < options["max_requests"]:
                path = ledger if rng.random() < 0.5 else rng.choice(claims)
                tally.sent += 1
                begin = time.perf_counter()
                try:
                    response = await http.get(path)
                    ok = response.status_code == 200
                    if not ok:
                        tally.statuses[response.status_code] = (
                            tally.statuses.get(response.status_code, 0) + 1
                        )
                except httpx.HTTPError as exc:
                    ok = False
                    name = type(exc).__name__
                    tally.statuses[name] = tally.statuses.get(name, 0) + 1
                tally.latencies_ms.append((time.perf_counter() - begin) * 1000)
                tally.errors += 0 if ok else 1

    await asyncio.gather(*(client(s, n) for n, s in enumerate(sessions)))
    elapsed = time.monotonic() - started
    lat = sorted(tally.latencies_ms) or [0.0]
    return {
        "p50_ms": round(statistics.median(lat), 1),
        "p95_ms": round(lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))], 1),
        "max_ms": round(lat[-1], 1),
        "errors": tally.errors,
        "requests_per_s": round(len(tally.latencies_ms) / elapsed, 2),
        "requests": len(tally.latencies_ms),
        "error_kinds": dict(tally.statuses),
    }
