"""The embedded database is used as a non-superuser application role by default.

Under ``make run`` the app connected as the cluster's superuser: replica mode, disabling
or dropping the append-only trigger and ``COPY … TO PROGRAM`` all worked. Now the
application role (``config.embedded.APP_ROLE``) gets data rights only, migrations run as
the owner, and a decision's time is the database's under either role.
"""

from __future__ import annotations

import datetime as dt
import os

import psycopg
import pytest
from django.db import connection

from config import embedded
from tests.factories import make_claim, make_plan, make_run

pytestmark = pytest.mark.skipif(
    not embedded.uses_embedded_database(os.environ.get("DATABASE_URL", "")),
    reason="about the embedded database; this session uses an external DATABASE_URL",
)

ATTACKS = {
    "replica mode (skips every trigger)": "SET session_replication_role = replica",
    "disabling the append-only trigger": (
        "ALTER TABLE review_reviewdecision DISABLE TRIGGER review_decision_no_update_delete"
    ),
    "dropping the append-only trigger": (
        "DROP TRIGGER review_decision_no_update_delete ON review_reviewdecision"
    ),
    "running a program": "COPY (SELECT 1) TO PROGRAM 'true'",
    "reading a server file": "SELECT pg_read_file('postgresql.conf')",
    "emptying the audit trail": "TRUNCATE review_reviewdecision",
    "making a role": "CREATE ROLE planted LOGIN SUPERUSER",
}


def _test_database_uri(role: str) -> str:
    s = connection.settings_dict
    return f"postgresql://{role}@/{s['NAME']}?host={s['HOST']}"


@pytest.fixture
def app(transactional_db):
    """The application role, granted on this test database as the embedded start does."""
    embedded.ensure_app_role(_test_database_uri(connection.settings_dict["USER"]))
    with psycopg.connect(_test_database_uri(embedded.APP_ROLE), autocommit=True) as conn:
        yield conn


def test_the_embedded_server_is_used_as_the_application_role_by_default():
    uri = embedded.start()
    assert uri.startswith(f"postgresql://{embedded.APP_ROLE}@")
    assert embedded.start("owner").startswith("postgresql://postgres")
    with psycopg.connect(uri) as conn:
        row = conn.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls,"
            " pg_has_role(current_user, 'pg_execute_server_program', 'member'),"
            " pg_has_role(current_user, 'pg_read_server_files', 'member')"
            " FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert row == (False, False, False, False, False, False, False)
    with pytest.raises(ValueError, match="EMBEDDED_PG_ROLE='root'"):
        embedded.start("root")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_application_role_cannot_get_around_the_audit_trail(app, attack):
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        app.execute(ATTACKS[attack])


def test_the_application_role_reads_and_writes_the_data(app, author, reviewer):
    claim = make_claim(make_run(make_plan(author, members=(reviewer,))), "Aspirin helps.")
    app.execute(
        "INSERT INTO review_reviewdecision (code, claim_id, reviewer_id, action, text_before,"
        " text_after, reason_code, reason, allowed_scope, prohibited_overstatements,"
        " claim_version, reverification, override, verdict_at_decision)"
        " VALUES (gen_random_uuid(), %s, %s, 'approve', 't', 't', '', '', '', '[]', 1, '{}',"
        " false, '')",
        [claim.pk, reviewer.pk],
    )
    assert app.execute("SELECT count(*) FROM review_reviewdecision").fetchone() == (1,)


BACKDATED = (
    "INSERT INTO review_reviewdecision (code, claim_id, reviewer_id, action, text_before,"
    " text_after, reason_code, reason, allowed_scope, prohibited_overstatements,"
    " claim_version, reverification, override, verdict_at_decision, created_at)"
    " VALUES (gen_random_uuid(), %s, %s, 'approve', 't', 't', '', '', '', '[]', 1, '{}',"
    " false, '', %s)"
)


@pytest.mark.parametrize("role", ["app", "owner"])
def test_a_back_dated_decision_is_refused_under_either_role(app, author, reviewer, role):
    claim = make_claim(make_run(make_plan(author, members=(reviewer,))), "Aspirin helps.")
    user = embedded.APP_ROLE if role == "app" else connection.settings_dict["USER"]
    a_year_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=365)
    with psycopg.connect(_test_database_uri(user), autocommit=True) as conn:
        with pytest.raises(
            psycopg.errors.IntegrityConstraintViolation, match="dated by the database"
        ):
            conn.execute(BACKDATED, [claim.pk, reviewer.pk, a_year_ago])
        assert conn.execute("SELECT count(*) FROM review_reviewdecision").fetchone() == (0,)


@pytest.mark.django_db
def test_the_orm_gets_the_time_the_database_gave(author, reviewer):
    from review.services.decisions import do_approve_claim

    claim = make_claim(make_run(make_plan(author, members=(reviewer,))), "Aspirin helps.")
    decision = do_approve_claim(reviewer, claim, claim.version, note="read it")
    with connection.cursor() as cursor:
        cursor.execute("SELECT created_at FROM review_reviewdecision WHERE id = %s", [decision.pk])
        (stored,) = cursor.fetchone()
    assert decision.created_at == stored


def test_migrations_run_as_the_owner_while_the_app_runs_as_the_application_role(monkeypatch):
    asked: list[str] = []

    def start(role: str = "app") -> str:
        asked.append(role)
        return f"{role}-url"

    monkeypatch.setattr(embedded, "start", start)
    app_url = f"postgresql://{embedded.APP_ROLE}@/evidence?host={embedded.data_dir()}"
    monkeypatch.setenv("DATABASE_URL", app_url)  # as the launcher sets it for its children
    monkeypatch.setenv("EMBEDDED_PG", "1")
    embedded.ensure_database_url()
    assert asked == [] and os.environ["DATABASE_URL"] == app_url
    embedded.ensure_database_url(owner=True)  # manage.py migrate
    assert asked == ["owner"] and os.environ["DATABASE_URL"] == "owner-url"
    monkeypatch.setenv("DATABASE_URL", "postgresql://someone@db.example/evidence")
    embedded.ensure_database_url(owner=True)  # an external database: left as configured
    assert os.environ["DATABASE_URL"] == "postgresql://someone@db.example/evidence"
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.delenv("EMBEDDED_PG_ROLE", raising=False)
    embedded.ensure_database_url()
    assert asked[-1] == "app"
