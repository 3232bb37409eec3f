"""A review decision is dated by the database: the column defaults to the statement's
time and a trigger refuses an INSERT that names any other time, under every role.

Before this the client wrote ``created_at`` (``auto_now_add``), so anyone with INSERT
on the table (the application role included) could write a back-dated decision.
"""

import django.db.models.functions.datetime
from django.db import migrations, models

FORWARD = """
CREATE OR REPLACE FUNCTION review_decision_dated_by_database() RETURNS trigger AS $$
BEGIN
    IF NEW.created_at IS DISTINCT FROM statement_timestamp() THEN
        RAISE EXCEPTION 'review decisions are dated by the database (created_at % refused)',
            NEW.created_at USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE TRIGGER review_decision_dated_by_database
    BEFORE INSERT ON review_reviewdecision
    FOR EACH ROW EXECUTE FUNCTION review_decision_dated_by_database();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS review_decision_dated_by_database ON review_reviewdecision;
DROP FUNCTION IF EXISTS review_decision_dated_by_database();
"""


class Migration(migrations.Migration):
    dependencies = [("review", "0005_overrides_quorum")]

    operations = [
        migrations.AlterField(
            model_name="reviewdecision",
            name="created_at",
            field=models.DateTimeField(
                db_default=django.db.models.functions.datetime.Now(), editable=False
            ),
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
