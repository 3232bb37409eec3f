"""No Docker engine runs here: check what can be checked of the deployment files.

The compose file is read as text, block by block (a top-level key and the lines indented
under it), which is all these checks need.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client

from tests.processes import BASE_DIR, free_port


def _blocks(text: str, indent: str = "") -> dict[str, str]:
    """The keys of a YAML mapping at ``indent``, each with the rest of its line and block."""
    pattern = rf"^{indent}([\w-]+):(.*)\n((?:{indent}  .*\n|[ \t]*\n)*)"
    return {m.group(1): m.group(2) + "\n" + m.group(3) for m in re.finditer(pattern, text, re.M)}


def _compose() -> dict[str, str]:
    return _blocks((BASE_DIR / "docker-compose.yml").read_text())


def _services() -> dict[str, str]:
    return _blocks(_compose()["services"], "  ")


def test_it_declares_db_web_and_worker_with_healthchecks():
    services = _services()
    assert re.search(r"^    image: pgvector/pgvector:\S+$", services["db"], re.M)
    for name in ("db", "web", "worker"):
        assert "\n    healthcheck:\n" in services[name], name
    assert '    command: ["python", "-m", "config.launcher", "web"]\n' in services["web"]
    assert '"procrastinate", "worker"]\n' in services["worker"]
    assert "\n  pgdata:" in "\n" + _compose()["volumes"]


def _database_url(block: str) -> str:
    url = re.search(r"^      DATABASE_URL: (.+)$", block, re.M) or re.search(
        r"^    DATABASE_URL: (.+)$", block, re.M
    )
    assert url is not None
    return url.group(1)


def test_it_points_the_apps_at_the_compose_database_and_requires_a_password():
    app = _compose()["x-app"]  # the anchor every app service merges
    services = _services()
    for name, block in (("x-app", app), ("migrate", services["migrate"]), ("web", services["web"])):
        url = _database_url(block)
        assert url.startswith("postgresql://") and "@db:5432/" in url, name
        assert "_PASSWORD:?" in url, name  # no default password
    for name in ("migrate", "web", "worker"):
        assert "\n    <<: *app\n" in "\n" + services[name], name


def test_it_runs_web_and_workers_as_the_application_role_and_migrations_as_the_owner():
    services = _services()
    app_role = "postgresql://${APP_DB_USER:-evidence_app}:${APP_DB_PASSWORD:?"
    assert _database_url(_compose()["x-app"]).startswith(app_role)  # the worker's
    assert _database_url(services["web"]).startswith(app_role)
    assert _database_url(services["migrate"]).startswith("postgresql://evidence:")
    assert "- ./deploy/postgres:/docker-entrypoint-initdb.d:ro" in services["db"]
    script = (BASE_DIR / "deploy" / "postgres" / "10-app-role.sh").read_text()
    assert "app-role.psql" in script and "APP_DB_PASSWORD:?" in script


def test_it_configures_several_web_processes():
    assert "EB_WEB_PROCESSES: ${EB_WEB_PROCESSES:-4}" in _services()["web"]
    from config.launcher import web_command

    command = web_command({"EB_WEB_PROCESSES": "3"}, "0.0.0.0", "8000")
    assert command[command.index("--workers") + 1] == "3"
    assert "uvicorn" in command and "config.launcher:web_application" in command
    assert "--factory" in command  # each worker process makes the application itself


def test_it_installs_cpu_torch_before_the_project():
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    torch_at = dockerfile.index("torch==2.13.0")
    assert "whl/cpu" in dockerfile[dockerfile.rindex("\n", 0, torch_at) : torch_at]
    assert torch_at < dockerfile.index("pip install -c constraints.txt")


def _web_health_command() -> list[str]:
    test = re.search(r"^      test: (\[.*\])$", _services()["web"], re.M)
    assert test is not None
    return list(json.loads(test.group(1)))


def test_it_checks_the_web_servers_health_endpoint():
    command = _web_health_command()
    assert command[:3] == ["CMD", "python", "-c"]
    assert "'/healthz'" in command[3] and "!= 200" in command[3]


def _answering(status: int) -> ThreadingHTTPServer:
    """A local HTTP server that answers every GET with ``status`` (a redirect to https)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.server.paths.append(self.path)  # type: ignore[attr-defined]
            self.send_response(status)
            self.send_header("Location", "https://127.0.0.1/healthz")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.paths = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _run_health_command(port: int) -> int:
    command = [sys.executable, *_web_health_command()[2:]]  # the image's python: ours
    env = {**os.environ, "EB_PORT": str(port)}
    return subprocess.run(command, env=env, capture_output=True, timeout=60).returncode


@pytest.mark.parametrize("status", [200, 301, 302, 404, 500])
def test_it_calls_the_web_server_healthy_only_on_a_200(status):
    server = _answering(status)
    try:
        code = _run_health_command(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    assert (code == 0) is (status == 200), code
    assert server.paths == ["/healthz"]  # type: ignore[attr-defined]


def test_it_calls_a_web_server_that_does_not_answer_unhealthy():
    assert _run_health_command(free_port()) != 0


@pytest.mark.django_db
def test_it_answers_healthz_over_plain_http_when_redirecting_to_https(settings):
    settings.SECURE_SSL_REDIRECT = True  # production's default: the check must still pass
    client = Client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 301
