"""Byte-identity check for moving reports into their own app (issue 24, acceptance 2).

Builds one report of a deterministic run in a throwaway database, exports it as Markdown,
HTML, the signed ZIP bundle and (when Chromium is at ``CHROMIUM_PATH``) PDF, and prints
the sha256 of each export. Run it on the commit before the move and on the commit after:
the lists must be equal. Results: docs/bench/report/move_check.md.

The run is the reports tests' scene (``tests/reports/conftest.py``): two approved claims,
one rejected, one failed and rejected, one unreviewed, each quoting its own snapshot.
Everything that would change between two builds is fixed:

- the clock: ``django.utils.timezone.now`` returns one instant;
- the decision times (dated by the database's ``now()``; a trigger refuses any other):
  rewritten to that instant plus the decision's pk in seconds, the table's user triggers
  disabled for the one UPDATE (a throwaway database);
- every ``uuid4`` (codes of plans, runs, claims, snapshots, reports): a counter;
- the signing key: an Ed25519 key from fixed bytes (Ed25519 signatures are deterministic);
- the primary keys: a fresh database, so every sequence starts at 1.

Usage, from the repository root (the embedded Postgres's environment set as for tests)::

    python docs/bench/report/move_check.py
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import uuid
from datetime import UTC, datetime
from importlib import import_module
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, cast
from unittest import mock

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("EMBEDDED_PG_ROLE", "owner")  # creates and drops its database
os.environ.setdefault("CHANNEL_LAYER", "memory")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

FIXED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
KEY_BYTES = bytes(range(32))
FORMATS = ("md", "html", "zip", "pdf")


def fixed_uuids() -> None:
    """``uuid.uuid4`` reads ``os.urandom`` at each call: give it a counter instead."""
    counter = iter(range(1, 1 << 32))

    def urandom(n: int) -> bytes:
        return next(counter).to_bytes(n, "big")

    uuid.os = SimpleNamespace(urandom=urandom)  # type: ignore[attr-defined]


def signing_key_file(folder: str) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = Path(folder) / "bundle-ed25519.pem"
    path.write_bytes(
        Ed25519PrivateKey.from_private_bytes(KEY_BYTES).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def user(username: str, *groups: str) -> Any:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    made = get_user_model().objects.create_user(username=username, password="pw-" + username)
    made.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in groups))
    return made


def build_scene() -> tuple[Any, Any]:
    """The run of tests/reports/conftest.py's ``scene`` and its author."""
    from ledger.models import Verdict
    from review.services.decisions import do_approve_claim, do_reject_claim
    from tests.factories import make_plan, make_run
    from tests.reports.conftest import APPROVED, FAILED, REJECTED, UNREVIEWED
    from tests.reports.conftest import claim_from_source as untyped_claim

    claim_from_source: Any = untyped_claim

    author = user("author", "researcher")
    reviewer = user("reviewer", "reviewer")
    researcher = user("researcher2", "researcher")
    run = make_run(make_plan(author, members=(reviewer, researcher)))
    sub = run.plan_version.subquestions.first()
    approved = [
        claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub, confidence=0.9),
        claim_from_source(
            run,
            APPROVED[1],
            title="Exercise cohort",
            sub=sub,
            confidence=0.7,
            allowed_scope="adults over 65 in observational cohorts",
        ),
    ]
    rejected = claim_from_source(run, REJECTED, title="Vitamin blog", sub=sub)
    failed = claim_from_source(run, FAILED, title="Coffee news", sub=sub, status=Verdict.FAIL)
    claim_from_source(run, UNREVIEWED, title="Tea study", sub=sub)
    for claim in approved:
        do_approve_claim(reviewer, claim, claim.version, note="read the source: it states this")
    do_reject_claim(reviewer, rejected, rejected.version, "unsupported")
    do_reject_claim(reviewer, failed, failed.version, "contradicted", "two trials")
    fix_decision_times()
    return run, author


def fix_decision_times() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE review_reviewdecision DISABLE TRIGGER USER")
        cursor.execute(
            "UPDATE review_reviewdecision SET created_at = %s + id * interval '1 second'",
            [FIXED],
        )
        cursor.execute("ALTER TABLE review_reviewdecision ENABLE TRIGGER USER")


def report_modules() -> tuple[ModuleType, ModuleType]:
    """(build, export): ``reports.build`` and ``reports.export`` after the move; before it,
    ``review.reports`` held both."""
    try:
        return import_module("reports.build"), import_module("reports.export")
    except ImportError:
        both = import_module("review.reports")
        return both, both


def export_hashes() -> dict[str, str]:
    from django.conf import settings

    build, export = report_modules()
    run, author = build_scene()
    report = build.do_build_report(run, author)
    formats = [f for f in FORMATS if f != "pdf" or Path(settings.CHROMIUM_PATH).exists()]
    return {
        fmt: hashlib.sha256(export.do_export_report(report, fmt, author).data).hexdigest()
        for fmt in formats
    }


def main() -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    test = cast(dict[str, Any], settings.DATABASES["default"].setdefault("TEST", {}))
    test["NAME"] = f"{test.get('NAME') or 'test_evidence'}_movecheck"
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        with tempfile.TemporaryDirectory() as folder:
            settings.BUNDLE_SIGNING_KEY = signing_key_file(folder)
            fixed_uuids()
            with mock.patch("django.utils.timezone.now", return_value=FIXED):
                hashes = export_hashes()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    for fmt, digest in hashes.items():
        print(f"{digest}  report.{fmt}")


if __name__ == "__main__":
    main()
