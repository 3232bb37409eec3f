"""The audit trail refuses TRUNCATE too (a statement trigger; UPDATE/DELETE are in 0002).

A TRUNCATE is allowed only to a superuser whose session (or database) sets
``evidence.allow_truncate = on`` — the test suite's throwaway database does, so that
Django can empty it between tests. The application role is not a superuser
(docker-compose.yml, README "Production"), so it can never pass.
"""

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION review_decision_no_truncate() RETURNS trigger AS $$
BEGIN
    IF COALESCE(current_setting('evidence.allow_truncate', true), '') = 'on'
       AND (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'review decisions are append-only (TRUNCATE refused)'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE TRIGGER review_decision_no_truncate
    BEFORE TRUNCATE ON review_reviewdecision
    FOR EACH STATEMENT EXECUTE FUNCTION review_decision_no_truncate();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS review_decision_no_truncate ON review_reviewdecision;
DROP FUNCTION IF EXISTS review_decision_no_truncate();
"""


class Migration(migrations.Migration):
    dependencies = [("review", "0003_rundiff_carried_from_report_date")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
