"""No Docker engine runs here: check what can be checked of the deployment files.

The compose file is read as text, block by block (a top-level key and the lines indented
under it), which is all these checks need.
"""

from __future__ import annotations

import re

from tests.processes import BASE_DIR


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
    assert re.search(r"^    command: \[\"daphne\",", services["web"], re.M)
    assert '"procrastinate", "worker"]\n' in services["worker"]
    assert "\n  pgdata:" in "\n" + _compose()["volumes"]


def test_it_points_the_apps_at_the_compose_database_and_requires_a_password():
    app = _compose()["x-app"]  # the anchor every app service merges
    url = re.search(r"^    DATABASE_URL: (.+)$", app, re.M)
    assert url is not None
    assert url.group(1).startswith("postgresql://") and "@db:5432/" in url.group(1)
    assert "${POSTGRES_PASSWORD:?" in url.group(1)  # no default password
    for name in ("migrate", "web", "worker"):
        assert "\n    <<: *app\n" in "\n" + _services()[name], name


def test_it_installs_cpu_torch_before_the_project():
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    torch_at = dockerfile.index("torch==2.13.0")
    assert "whl/cpu" in dockerfile[dockerfile.rindex("\n", 0, torch_at) : torch_at]
    assert torch_at < dockerfile.index("pip install -c constraints.txt")
