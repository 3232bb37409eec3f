"""Claims rejected before ``Claim.rejection_code`` existed get their rejection's reason code
(ledger 0015 adds the field, review 0009 fills it from the append-only decisions)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ledger.models import Claim
from review.models import ReviewDecision
from tests.factories import make_claim, make_plan, make_run

BEFORE = [("ledger", "0014_cited_claims"), ("review", "0008_move_reports_out")]

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)


def migrate_to_leaves():
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def decide(claim, reviewer, action, version, reason_code=""):
    ReviewDecision.objects.create(
        claim=claim,
        reviewer=reviewer,
        action=action,
        reason_code=reason_code,
        claim_version=version,
    )


def test_the_latest_rejection_of_a_rejected_claim_gives_its_code(author):
    run = make_run(make_plan(author))
    twice = make_claim(run, "Rejected twice, last as contradicted.")
    decide(twice, author, "reject", 1, "unsupported")
    decide(twice, author, "reject", 2, "contradicted")
    approved = make_claim(run, "Rejected, then approved.")
    decide(approved, author, "reject", 1, "contradicted")
    decide(approved, author, "approve", 2)
    lost = make_claim(run, "Rejected with no decision on record.")
    Claim.objects.filter(pk=twice.pk).update(review_state="rejected")
    Claim.objects.filter(pk=approved.pk).update(review_state="approved")
    Claim.objects.filter(pk=lost.pk).update(review_state="rejected")
    try:
        migrate(BEFORE)  # drops the field
        migrate_to_leaves()  # adds it and fills it
        codes = dict(Claim.objects.values_list("pk", "rejection_code"))
        assert codes[twice.pk] == "contradicted"
        assert codes[approved.pk] == ""  # not rejected now
        assert codes[lost.pk] == ""  # no rejection on record: nothing to say
    finally:
        migrate_to_leaves()
