"""Report and Export move to the reports app: removed from review's state only.

Their tables stay as they are here; ``reports.0001_initial`` takes them over (state only)
and ``reports.0002_rename_tables`` renames them and moves their content types. No row is
copied or lost. RunDiff stays in review (it has no relation to Report).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("review", "0007_report_audited")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Export"),
                migrations.DeleteModel(name="Report"),
            ],
            database_operations=[],
        )
    ]
