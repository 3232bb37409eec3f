"""The audit trail is append-only in the database too: UPDATE and DELETE raise."""

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION review_decision_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'review decisions are append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER review_decision_no_update_delete
    BEFORE UPDATE OR DELETE ON review_reviewdecision
    FOR EACH ROW EXECUTE FUNCTION review_decision_append_only();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS review_decision_no_update_delete ON review_reviewdecision;
DROP FUNCTION IF EXISTS review_decision_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
