"""The reviewer's last word: approving a FAIL / UNCERTAIN / UNVERIFIABLE claim as an override."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import Relation, ReviewState, Verdict
from reports.build import do_build_report
from reports.integrity import report_document
from review.models import GatePolicy, ReviewDecision
from review.services.capsules import approved_capsules
from review.services.decisions import DecisionRefused, do_approve_claim
from review.services.gate import gate_status
from tests.factories import add_member, make_claim, make_passage, make_snapshot

pytestmark = pytest.mark.django_db

REASON = "The trial abstract states this finding; the verifier misread a subgroup."
CONTRARY = "In a second trial, Drug A did not lower blood pressure in adults."


@pytest.fixture
def failed(run):
    claim = make_claim(run, "Drug A lowers blood pressure in adults.", status=Verdict.FAIL)
    other = make_passage(make_snapshot(f"Replication. {CONTRARY}", title="Replication trial"))
    make_claim_link(claim, other, CONTRARY)
    return claim


def make_claim_link(claim, passage, quote):
    start = passage.snapshot.text.index(quote)
    claim.evidence.create(
        passage=passage,
        snapshot=passage.snapshot,
        pool="refute",
        relation=Relation.CONTRADICTS,
        quote=quote,
        quote_start=start,
        quote_end=start + len(quote),
        passage_fingerprint=passage.fingerprint,
    )


def _approve(client, claim, note=""):
    url = reverse("review-approve-claim", args=[claim.code])
    return client.post(url, {"version": claim.version, "note": note})


def test_it_refuses_an_override_without_a_written_reason(client, reviewer, failed):
    client.force_login(reviewer)
    page = client.get(failed.get_absolute_url()).content.decode()
    assert "Approve as override" in page and 'id="override-note"' in page
    response = _approve(client, failed, "ok")
    assert response.status_code == 422
    assert "overrides the verifiers: write why" in response.content.decode()
    assert not ReviewDecision.objects.exists()


@pytest.mark.parametrize("status", [Verdict.FAIL, Verdict.UNCERTAIN, Verdict.UNVERIFIABLE])
def test_it_approves_any_non_pass_verdict_as_a_marked_override(reviewer, run, status):
    claim = make_claim(run, f"Drug A lowers blood pressure ({status}).", status=status)
    decision = do_approve_claim(reviewer, claim, claim.version, REASON)
    assert (decision.override, decision.verdict_at_decision, decision.reason) == (
        True,
        status,
        REASON,
    )
    claim.refresh_from_db()
    assert claim.review_state == ReviewState.APPROVED
    [capsule] = approved_capsules(run)
    assert (capsule.override, capsule.overridden_verdict, capsule.override_reason) == (
        True,
        status,
        REASON,
    )


def test_it_marks_the_override_in_the_audit_trail_and_on_the_capsule(client, reviewer, failed):
    client.force_login(reviewer)
    assert _approve(client, failed, REASON).status_code == 302
    audit = client.get(reverse("review-show-audit", args=[failed.run.code])).content.decode()
    assert "override of FAIL" in audit and REASON in audit
    page = client.get(failed.get_absolute_url()).content.decode()
    assert 'id="override-mark"' in page and REASON in page
    assert "Reviewer override" in page
    assert CONTRARY in page  # the contrary evidence stays on the capsule


def test_it_keeps_an_overridden_claim_in_the_report_with_its_contrary_evidence(
    reviewer, author, run, failed
):
    do_approve_claim(reviewer, failed, failed.version, REASON)
    report = do_build_report(run, author)
    document = report_document(report)
    [row] = document.claims
    assert row.text == failed.text
    assert row.override == f"FAIL overridden by reviewer: {REASON}"
    assert row.contrary == [CONTRARY]
    assert [a.override for a in document.appendix_c] == ["FAIL"]
    assert "Reviewer overrides" in report.markdown and REASON in report.markdown
    assert CONTRARY in report.markdown


def test_it_needs_a_second_reviewer_for_an_override_when_the_gate_says_so(
    reviewer, other_reviewer, run, failed
):
    GatePolicy.objects.create(plan=run.plan_version.plan, override_second_reviewer=True)
    do_approve_claim(reviewer, failed, failed.version, REASON)
    failed.refresh_from_db()
    assert failed.review_state == ReviewState.OVERRIDING
    assert failed.code in gate_status(run).blocking
    assert approved_capsules(run) == []
    with pytest.raises(DecisionRefused, match="another reviewer must confirm"):
        do_approve_claim(reviewer, failed, failed.version, REASON)
    do_approve_claim(other_reviewer, failed, failed.version, "Confirmed: I read it too.")
    failed.refresh_from_db()
    assert failed.review_state == ReviewState.APPROVED
    assert [d.override for d in failed.decisions.all()] == [True, True]
    assert not gate_status(run).blocking


@pytest.fixture
def other_reviewer(django_user_model, plan):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("reviewer2", password="pw")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    add_member(plan, user, "reviewer")
    return user
