"""No Docker engine runs here: check what can be checked of the deployment files."""

from __future__ import annotations

from typing import Any

import yaml

from tests.processes import BASE_DIR


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((BASE_DIR / "docker-compose.yml").read_text())
    return loaded


def test_it_declares_db_web_and_worker_with_healthchecks():
    services = _compose()["services"]
    assert services["db"]["image"].startswith("pgvector/pgvector:")
    for name in ("db", "web", "worker"):
        assert "healthcheck" in services[name], name
    assert "daphne" in services["web"]["command"]
    assert services["worker"]["command"][-2:] == ["procrastinate", "worker"]
    assert "pgdata" in _compose()["volumes"]


def test_it_points_the_apps_at_the_compose_database_and_requires_a_password():
    services = _compose()["services"]
    url = services["web"]["environment"]["DATABASE_URL"]
    assert url.startswith("postgresql://") and "@db:5432/" in url
    assert "${POSTGRES_PASSWORD:?" in url  # no default password


def test_it_installs_cpu_torch_before_the_project():
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    torch_at = dockerfile.index("torch==2.13.0")
    assert "whl/cpu" in dockerfile[dockerfile.rindex("\n", 0, torch_at) : torch_at]
    assert torch_at < dockerfile.index("pip install -c constraints.txt")
