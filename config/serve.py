"""The production web server's command line (uvicorn), shared by the launcher, compose and
``bench_load``: one place decides how the web processes are started."""

from __future__ import annotations

import sys


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

    uvicorn reads request bodies as the application asks for them (with flow control),
    so ``config.limits`` can refuse an oversized body before it is buffered.
    """
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "config.asgi:application",
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
