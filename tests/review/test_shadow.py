"""Shadow vs counted verdicts vs reviewer decisions: the command and the run's page."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from ledger.models import Verdict
from review.services.decisions import do_approve_claim, do_reject_claim
from tests.factories import make_claim

pytestmark = pytest.mark.django_db

REASON = "Read the abstract: it states this plainly."


@pytest.fixture
def judged(run, reviewer):
    """Four claims judged with a shadow family: it would have changed two verdicts."""
    passed = make_claim(run, "Drug A lowers blood pressure.", shadow_status=Verdict.PASS)
    doubted = make_claim(run, "Drug A is safe.", shadow_status=Verdict.UNCERTAIN)
    failed = make_claim(
        run, "Drug A cures hypertension.", status=Verdict.FAIL, shadow_status=Verdict.FAIL
    )
    held = make_claim(
        run, "Drug A helps adults.", status=Verdict.UNCERTAIN, shadow_status=Verdict.PASS
    )
    do_approve_claim(reviewer, passed, passed.version)
    do_reject_claim(reviewer, doubted, doubted.version, "unsupported")
    do_reject_claim(reviewer, failed, failed.version, "contradicted")
    do_approve_claim(reviewer, held, held.version, REASON)
    return run


def test_it_reports_shadow_changes_and_reviewer_agreement(judged, tmp_path):
    out = StringIO()
    call_command(
        "shadow_report", "--run", str(judged.code), "--json", tmp_path / "s.json", stdout=out
    )
    text = out.getvalue()
    assert "with_shadow: 4" in text
    assert "shadow_changed: 2" in text
    # counted: PASS approved (agree), PASS rejected (disagree), FAIL rejected (agree)
    assert "reviewer_agreement: 0.667 (2/3)" in text
    # shadow: PASS approved, UNCERTAIN (no call), FAIL rejected, PASS overridden-approved
    assert "shadow_reviewer_agreement: 0.667 (2/3)" in text
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["overall"]["decisions"]["uncertain"] == {"override": 1}
    assert data["runs"][str(judged.code)]["shadow_vs_counted"]["pass"] == {
        "pass": 1,
        "uncertain": 1,
    }


def test_it_refuses_an_unknown_run_code():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no such run"):
        call_command("shadow_report", "--run", "00000000-0000-0000-0000-000000000000")


def test_it_shows_the_comparison_on_the_runs_page(client, reviewer, outsider, judged):
    url = reverse("review-show-shadow", args=[judged.code])
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(reviewer)
    page = client.get(url).content.decode()
    assert 'id="reviewer-agreement"' in page
    assert "reviewers agreed with 2" in page
    assert "would have changed 2 verdicts" in page
