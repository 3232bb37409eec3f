"""Report and Export move from review to reports with their rows (review 0008, reports
0001–0002): the same ids and fields, on renamed tables, content types and permissions
kept, and back again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reports.models import Export, Report
from tests.factories import make_plan, make_run

BEFORE = [("review", "0007_report_audited"), ("reports", None)]
AFTER = [("review", "0008_move_reports_out"), ("reports", "0002_rename_tables")]
DATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(targets):
    """Migrate to ``targets``; the historical apps there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    nodes = [t for t in targets if t[1] is not None]
    return executor.loader.project_state(nodes).apps


def migrate_to_leaves():
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()


def table_exists(name):
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [name])
        return cursor.fetchone()[0] is not None


@pytest.fixture
def before_the_move(author):
    """The database as it was before the move, holding one report and one export of it."""
    run = make_run(make_plan(author))
    try:
        apps = migrate(BEFORE)
        old_report = apps.get_model("review", "Report").objects.create(
            run_id=run.pk,
            version=1,
            synthesizer="extractive",
            outline={"format": 1, "claims": []},
            markdown="# A report\n",
            content_hash="a" * 64,
            claim_codes=["c1"],
            check_findings=[{"kind": "ok"}],
            audited={"title": "audited"},
            created_by_id=author.pk,
            created_at=DATED,
        )
        old_export = apps.get_model("review", "Export").objects.create(
            report_id=old_report.pk, format="md", content_hash="b" * 64, size=12
        )
        content_type = apps.get_model("contenttypes", "ContentType").objects.get(
            app_label="review", model="report"
        )
        permission = apps.get_model("auth", "Permission").objects.get(
            content_type=content_type, codename="view_report"
        )
        permission.user_set.add(author.pk)
        yield {
            "run": run,
            "report": old_report,
            "export": old_export,
            "content_type": content_type.pk,
        }
    finally:
        migrate_to_leaves()


def test_it_keeps_every_report_and_export_row(before_the_move, author):
    old = before_the_move
    assert table_exists("review_report") and not table_exists("reports_report")
    migrate(AFTER)
    assert not table_exists("review_report") and not table_exists("review_export")
    assert Report._meta.db_table == "reports_report"
    assert Export._meta.db_table == "reports_export"
    report = Report.objects.get()
    assert report.pk == old["report"].pk
    assert report.code == old["report"].code
    assert (report.run_id, report.version, report.synthesizer) == (old["run"].pk, 1, "extractive")
    assert report.outline == {"format": 1, "claims": []}
    assert (report.markdown, report.content_hash) == ("# A report\n", "a" * 64)
    assert report.claim_codes == ["c1"]
    assert report.check_findings == [{"kind": "ok"}]
    assert report.audited == {"title": "audited"}
    assert (report.created_by_id, report.created_at) == (author.pk, DATED)
    export = Export.objects.get()
    assert (export.pk, export.report_id) == (old["export"].pk, report.pk)
    assert (export.format, export.content_hash, export.size) == ("md", "b" * 64, 12)
    assert export.created_at == old["export"].created_at


def test_it_numbers_new_rows_after_the_moved_ones(before_the_move, author):
    migrate(AFTER)
    report = Report.objects.create(
        run=before_the_move["run"], version=2, synthesizer="x", markdown="", content_hash=""
    )
    assert report.pk > before_the_move["report"].pk
    Export.objects.create(report=report, format="md", content_hash="", size=0)
    assert Export.objects.count() == 2


def test_it_moves_the_content_types_with_their_permissions(before_the_move, author):
    migrate(AFTER)
    ContentType.objects.clear_cache()
    content_type = ContentType.objects.get_for_model(Report)
    assert content_type.pk == before_the_move["content_type"]
    assert content_type.app_label == "reports"
    assert not ContentType.objects.filter(app_label="review", model__in=["report", "export"])
    assert Permission.objects.get(codename="view_report").content_type == content_type
    author.refresh_from_db()
    assert type(author).objects.get(pk=author.pk).has_perm("reports.view_report")


def test_it_migrates_back_to_review(before_the_move):
    migrate(AFTER)
    apps = migrate(BEFORE)
    assert table_exists("review_report") and not table_exists("reports_report")
    report = apps.get_model("review", "Report").objects.get()
    old = before_the_move["report"]
    assert (report.pk, report.code) == (old.pk, old.code)
    assert apps.get_model("review", "Export").objects.get().report_id == report.pk
    content_type = apps.get_model("contenttypes", "ContentType").objects.get(
        pk=before_the_move["content_type"]
    )
    assert content_type.app_label == "review"
