"""Plan members get a role (viewer, researcher, reviewer), set by the plan's owner in the app.

Existing members keep what their site-wide groups let them do: a member in the
reviewer group becomes a reviewer of the plan, one in the researcher group a
researcher, anyone else a viewer.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

COPY = """
INSERT INTO research_planmember (plan_id, user_id, role, added_at)
SELECT m.plan_id, m.user_id,
       CASE WHEN EXISTS (SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
                          WHERE ug.user_id = m.user_id AND g.name = 'reviewer') THEN 'reviewer'
            WHEN EXISTS (SELECT 1 FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
                          WHERE ug.user_id = m.user_id AND g.name = 'researcher') THEN 'researcher'
            ELSE 'viewer' END,
       now()
  FROM research_plan_members m
"""

COPY_BACK = """
INSERT INTO research_plan_members (plan_id, user_id)
SELECT plan_id, user_id FROM research_planmember
"""


class Migration(migrations.Migration):
    dependencies = [
        ("research", "0003_countering_state"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="PlanMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("viewer", "viewer (reads the plan, its runs and ledger)"), ("researcher", "researcher (also edits and runs it)"), ("reviewer", "reviewer (also decides on its claims)")], default="viewer", max_length=12)),
                ("added_at", models.DateTimeField(auto_now_add=True)),
                ("added_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                ("plan", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="research.plan")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="plan_memberships", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["plan", "added_at", "pk"],
                "constraints": [models.UniqueConstraint(fields=("plan", "user"), name="planmember_unique_user")],
            },
        ),
        migrations.RunSQL(COPY, COPY_BACK),
        migrations.RemoveField(model_name="plan", name="members"),
        migrations.AddField(
            model_name="plan",
            name="members",
            field=models.ManyToManyField(blank=True, help_text="People besides the owner who may see this plan, each with a role.", related_name="plans", through="research.PlanMember", through_fields=("plan", "user"), to=settings.AUTH_USER_MODEL),
        ),
    ]
