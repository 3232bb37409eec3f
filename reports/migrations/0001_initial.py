"""Report and Export, taken over from review with their rows: state only.

The tables were created by review's migrations (0001, 0003, 0007) and hold every report
built so far; this migration only tells Django that the models now belong to this app
(still on the tables ``review_report`` / ``review_export``). ``0002_rename_tables``
renames the tables and moves the content types.
"""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("research", "0005_audit_reports"),
        ("review", "0008_move_reports_out"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Report",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("code", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                        ("version", models.PositiveIntegerField()),
                        ("synthesizer", models.CharField(max_length=60)),
                        ("outline", models.JSONField(default=dict)),
                        ("markdown", models.TextField()),
                        ("content_hash", models.CharField(max_length=64)),
                        ("claim_codes", models.JSONField(default=list, help_text="Approved capsules it was built from.")),
                        ("check_findings", models.JSONField(blank=True, default=list)),
                        ("audited", models.JSONField(blank=True, default=dict, help_text="An audit run's audited report as it stood at this version (review.audited.AuditedReport); empty for a research run.")),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now, help_text="The document's date.")),
                        ("created_by", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                        ("run", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="reports", to="research.run")),
                    ],
                    options={"ordering": ["run", "version"], "db_table": "review_report"},
                ),
                migrations.CreateModel(
                    name="Export",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("format", models.CharField(max_length=10)),
                        ("content_hash", models.CharField(max_length=64)),
                        ("size", models.PositiveIntegerField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("created_by", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                        ("report", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="exports", to="reports.report")),
                    ],
                    options={"ordering": ["report", "created_at"], "db_table": "review_export"},
                ),
                migrations.AddConstraint(
                    model_name="report",
                    constraint=models.UniqueConstraint(fields=("run", "version"), name="report_unique_version"),
                ),
            ],
            database_operations=[],
        )
    ]
