"""The production web server's command line (uvicorn), shared by the launcher, compose and
``bench_load``: one place decides how the web processes are started, and that they end
with the process that started them."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WEB_APPLICATION = "config.launcher:web_application"


def web_processes(env: dict[str, str]) -> int:
    raw = env.get("EB_WEB_PROCESSES", "").strip() or "2"
    try:
        value = int(raw)
    except ValueError:
        raise SystemExit(f"EB_WEB_PROCESSES must be an integer, got {raw!r}") from None
    if value < 1:
        raise SystemExit(f"EB_WEB_PROCESSES must be at least 1, got {value}")
    return value


def web_command(env: dict[str, str], host: str, port: str) -> list[str]:
    """uvicorn with ``EB_WEB_PROCESSES`` worker processes (it restarts a dead one itself).

    Each worker process makes the application with ``config.launcher.web_application``,
    which first has it die with the uvicorn process that started it: a killed uvicorn
    leaves no worker serving (and holding the port) unsupervised.

    uvicorn reads request bodies as the application asks for them (with flow control),
    so ``config.limits`` can refuse an oversized body before it is buffered.
    """
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        WEB_APPLICATION,  # config.asgi's application, made by each worker process
        "--factory",
        "--host",
        host,
        "--port",
        port,
        "--workers",
        str(web_processes(env)),
        "--ws",
        "websockets-sansio",
        "--lifespan",
        "off",
        "--timeout-graceful-shutdown",
        "10",
        "--no-server-header",
    ]
    proxies = env.get("EB_FORWARDED_ALLOW_IPS", "").strip()
    if proxies:  # a reverse proxy's address: trust its X-Forwarded-For for client IPs
        command += ["--proxy-headers", "--forwarded-allow-ips", proxies]
    else:
        command += ["--no-proxy-headers"]
    if env.get("EB_ACCESS_LOG", "") not in {"1", "true"}:
        command += ["--no-access-log"]
    return command


def die_with_parent(parent_pid: int) -> None:
    """Have Linux send this process SIGTERM when its parent dies (``PR_SET_PDEATHSIG``).

    Called in a child right after it was forked or spawned. A parent that died before the
    call sends nothing, so the child exits at once when its parent is no longer
    ``parent_pid``. Other systems have no such call; there this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent_pid:
        raise SystemExit(f"parent process {parent_pid} is gone; exiting")
