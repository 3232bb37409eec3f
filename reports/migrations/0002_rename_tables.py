"""The moved tables take this app's names, and the content types (with the permissions
that point at them) move from review to reports.

``review_report`` → ``reports_report`` and ``review_export`` → ``reports_export``
(``ALTER TABLE … RENAME``: rows, grants, constraints, indexes and the id sequences go with
the table, under their old names, which Django finds by introspection). No trigger, view
or raw SQL names these tables.

The content types keep their ids, so every permission and admin log entry that points
at them still does. Should ``reports`` content types exist already (``post_migrate`` of
a ``migrate`` stopped between the two apps' migrations created them, with permissions of
their own), those fresh duplicates are deleted first.
"""

from django.db import migrations

MODELS = ("report", "export")


def move_content_types(old: str, new: str):
    def move(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(
            schema_editor.connection.alias
        )
        for model in MODELS:
            if content_types.filter(app_label=old, model=model).exists():
                content_types.filter(app_label=new, model=model).delete()
                content_types.filter(app_label=old, model=model).update(app_label=new)

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("reports", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("admin", "0003_logentry_add_action_flag_choices"),
    ]

    operations = [
        migrations.AlterModelTable(name="report", table=None),
        migrations.AlterModelTable(name="export", table=None),
        migrations.RunPython(
            move_content_types("review", "reports"), move_content_types("reports", "review")
        ),
    ]
