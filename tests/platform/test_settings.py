"""Start-up refuses bad configuration, naming the variable; production passes --deploy."""

from __future__ import annotations

import subprocess
import sys

from tests.processes import BASE_DIR, child_env

PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": "k" * 20 + "-production-secret-" + "z" * 20,
    "DJANGO_ALLOWED_HOSTS": "evidence.example.org",
}


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BASE_DIR / "manage.py"), *args],
        env=child_env(**env),
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_passes_the_deploy_check_with_production_settings():
    result = _manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_names_a_missing_production_secret():
    external = "postgresql://evidence:pw@db.example.org:5432/evidence"
    env = {**PRODUCTION, "DJANGO_SECRET_KEY": "", "DATABASE_URL": external}
    result = _manage("check", **env)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is required" in result.stderr


def test_it_keeps_a_local_secret_for_an_install_on_the_embedded_database(tmp_path):
    from config.env import local_secret_key

    path = tmp_path / "secret_key"
    key = local_secret_key(path)
    assert len(key) >= 32 and local_secret_key(path) == key  # made once, then kept
    assert path.stat().st_mode & 0o777 == 0o600
    result = _manage("check", **{**PRODUCTION, "DJANGO_SECRET_KEY": ""})  # embedded database
    assert result.returncode == 0, result.stderr


def test_it_names_a_malformed_database_url():
    result = _manage("check", DATABASE_URL="mysql://nobody@somewhere/db")
    assert result.returncode != 0
    assert "DATABASE_URL must be a postgres" in result.stderr


def test_it_names_a_malformed_boolean():
    result = _manage("check", DJANGO_DEBUG="maybe")
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be a boolean" in result.stderr


def test_it_uses_the_postgres_channel_layer_with_real_settings():
    code = (
        "import django; django.setup(); from channels.layers import get_channel_layer; "
        "layer = get_channel_layer(); print(type(layer).__name__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        env=child_env(DJANGO_SETTINGS_MODULE="config.settings", CHANNEL_LAYER=""),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "PostgresChannelLayer"


def test_it_pools_connections_only_when_asked_and_never_with_persistent_ones():
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.DATABASES['default']['OPTIONS'].get('pool'))"
    )
    env = child_env(DJANGO_SETTINGS_MODULE="config.settings", DATABASE_POOL_MAX="4")
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, env=env
    )
    assert result.stdout.strip() == "{'min_size': 1, 'max_size': 4, 'timeout': 30}"
    clash = _manage("check", DATABASE_POOL_MAX="4", DATABASE_CONN_MAX_AGE="60")
    assert (
        clash.returncode != 0 and "DATABASE_POOL_MAX needs DATABASE_CONN_MAX_AGE=0" in clash.stderr
    )
