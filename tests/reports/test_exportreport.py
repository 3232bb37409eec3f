"""``manage.py exportreport``: scripted exports, refusals and bad input."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from reports.build import do_build_report
from reports.export import FORMATS, do_export_report
from reports.models import Export
from tests.reports.bundles import bundle_problems


@pytest.fixture
def report(scene, run, author):
    return do_build_report(run, author)


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_it_writes_every_format_to_a_file(report, author, tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    call_command("exportreport", str(report.code), "--format", fmt, "--out", str(out))
    expected = do_export_report(report, fmt, author).data
    assert out.read_bytes() == expected
    if fmt == "zip":
        assert bundle_problems(out) == []


@pytest.mark.django_db
def test_it_finds_a_report_by_its_run_and_records_who_exported(report, run, author, tmp_path):
    out = tmp_path / "r.md"
    call_command(
        "exportreport",
        str(run.code),
        "--report-version",
        "1",
        "--format",
        "md",
        "--out",
        str(out),
        "--user",
        "author",
    )
    assert out.read_text() == report.markdown
    assert Export.objects.get().created_by == author


@pytest.mark.django_db
def test_it_says_what_is_wrong_with_its_input(report, tmp_path):
    out = tmp_path / "x.md"
    for args, message in [
        (["not-a-code"], "is not a report or run code"),
        (["00000000-0000-0000-0000-000000000000"], "no report"),
        ([str(report.code), "--report-version", "2"], "is version 1, not 2"),
        ([str(report.code), "--user", "nobody"], "no user 'nobody'"),
    ]:
        with pytest.raises(CommandError, match=message):
            call_command("exportreport", *args, "--format", "md", "--out", str(out))
    with pytest.raises(CommandError, match="cannot write"):
        call_command("exportreport", str(report.code), "--format", "md", "--out", str(tmp_path))
    assert not out.exists()


@pytest.mark.django_db
def test_it_refuses_a_tampered_report_and_writes_nothing(report, scene, tmp_path, capsys):
    claim = scene["approved"][0]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ledger_snapshot SET text = upper(text) WHERE id = %s",
            [claim.evidence.get().snapshot_id],
        )
    out = tmp_path / "r.html"
    with pytest.raises(CommandError, match="export refused"):
        call_command("exportreport", str(report.code), "--format", "html", "--out", str(out))
    assert not out.exists()
    assert f"REFUSED claim C1 ({claim.code})" in capsys.readouterr().err
