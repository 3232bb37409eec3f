"""Narrowing re-verifies the new text against the claim's evidence with the real verifiers
(rules + the shipped learned verifier over the offline MiniLM embedder)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from ledger.models import ReviewState, Verdict
from research.pipeline.text import claim_fingerprint
from review.models import GatePolicy, ReviewDecision
from review.services.capsules import approved_capsules
from review.services.decisions import DecisionRefused, do_approve_claim, do_narrow_claim
from review.services.gate import gate_status
from tests.factories import add_member, make_claim, make_passage, make_snapshot

TRIAL = (
    "Background. In a randomised trial of 400 patients, Drug A lowered blood pressure in "
    "adults with hypertension. Children were not studied."
)
QUOTE = (
    "In a randomised trial of 400 patients, Drug A lowered blood pressure in adults with "
    "hypertension."
)
SUPPORTED = "Drug A lowered blood pressure in adults with hypertension."
CONTRADICTED = "Drug A lowered blood pressure in 40 patients."


@pytest.fixture
def broad(run):
    passage = make_passage(make_snapshot(TRIAL, title="Drug A trial"))
    return make_claim(
        run,
        "Drug A lowers blood pressure in adults and children.",
        status=Verdict.UNCERTAIN,
        flags=["overstatement"],
        passage=passage,
        quote=QUOTE,
    )


def _narrow(client, claim, text, **extra):
    url = reverse("review-narrow-claim", args=[claim.code])
    return client.post(url, {"version": claim.version, "text": text, **extra})


@pytest.mark.django_db
def test_it_reverifies_a_narrowing_and_shows_the_result(client, reviewer, run, broad):
    client.force_login(reviewer)
    response = _narrow(
        client,
        broad,
        SUPPORTED,
        allowed_scope="adults with hypertension",
        prohibited_overstatements="works in children\ncures hypertension",
    )
    assert response.status_code == 302
    assert response["Location"] == broad.get_absolute_url()

    decision = ReviewDecision.objects.get()
    assert (decision.action, decision.text_before, decision.text_after) == (
        "narrow",
        "Drug A lowers blood pressure in adults and children.",
        SUPPORTED,
    )
    assert decision.reverification["available"] is True
    assert decision.reverification["status"] == "pass"
    assert {v["family"] for v in decision.reverification["votes"]} >= {"rules", "learned"}
    broad.refresh_from_db()
    assert (broad.text, broad.status, broad.review_state) == (
        SUPPORTED,
        Verdict.PASS,
        ReviewState.NARROWED,
    )
    assert broad.fingerprint == claim_fingerprint(SUPPORTED)
    assert broad.prohibited_overstatements == ["works in children", "cures hypertension"]
    assert not gate_status(run).open  # a narrowed claim still needs approval

    page = client.get(broad.get_absolute_url()).content.decode()
    assert 'id="reverification"' in page
    assert "may be approved" in page

    assert (
        client.post(
            reverse("review-approve-claim", args=[broad.code]), {"version": broad.version}
        ).status_code
        == 302
    )
    assert gate_status(run).open
    [capsule] = approved_capsules(run)
    assert (capsule.text, capsule.allowed_scope) == (SUPPORTED, "adults with hypertension")


@pytest.mark.django_db
def test_it_refuses_to_approve_a_narrowing_the_evidence_does_not_support(
    client, reviewer, run, broad
):
    client.force_login(reviewer)
    assert _narrow(client, broad, CONTRADICTED).status_code == 302
    broad.refresh_from_db()
    # A number clash with the claim's own source: a possible contradiction, not a FAIL.
    assert broad.status == Verdict.UNCERTAIN
    assert ReviewDecision.objects.get().reverification["status"] == "uncertain"
    assert "possible-contradiction" in ReviewDecision.objects.get().reverification["flags"]

    page = client.get(broad.get_absolute_url()).content.decode()
    assert "Approving it overrides the verifiers" in page
    assert "number mismatch" in page

    url = reverse("review-approve-claim", args=[broad.code])
    response = client.post(url, {"version": broad.version})
    assert response.status_code == 422
    assert "overrides the verifiers: write why" in response.content.decode()
    assert ReviewDecision.objects.filter(action="approve").count() == 0
    assert approved_capsules(run) == []
    assert not gate_status(run).open


@pytest.mark.django_db
def test_it_refuses_approval_when_the_narrowing_could_not_be_reverified(reviewer, broad):
    ReviewDecision.objects.create(
        claim=broad,
        reviewer=reviewer,
        action="narrow",
        text_before=broad.text,
        text_after=SUPPORTED,
        claim_version=1,
        reverification={"available": False, "reason": "no verifier configured"},
    )
    broad.text, broad.review_state, broad.version = SUPPORTED, ReviewState.NARROWED, 2
    broad.save()
    with pytest.raises(DecisionRefused, match="has not been re-verified"):
        do_approve_claim(reviewer, broad, 2)


@pytest.mark.django_db
def test_it_needs_a_second_reviewer_to_approve_a_high_impact_narrowing(
    client, reviewer, plan, broad
):
    GatePolicy.objects.create(plan=plan, require_second_reviewer=True)
    do_narrow_claim(reviewer, broad, 1, SUPPORTED)
    with pytest.raises(DecisionRefused, match="Second-reviewer rule"):
        do_approve_claim(reviewer, broad, 2)

    second = User.objects.create_user("second", password="pw")
    second.groups.add(Group.objects.get(name="reviewer"))
    add_member(plan, second)
    client.force_login(second)
    url = reverse("review-approve-claim", args=[broad.code])
    assert client.post(url, {"version": 2}).status_code == 302
    assert broad.decisions.last().reviewer == second


@pytest.mark.django_db
def test_it_lets_the_narrower_approve_types_outside_the_high_impact_list(reviewer, plan, broad):
    GatePolicy.objects.create(plan=plan, require_second_reviewer=True, high_impact_types=["causal"])
    do_narrow_claim(reviewer, broad, 1, SUPPORTED)
    do_approve_claim(reviewer, broad, 2)
    broad.refresh_from_db()
    assert broad.review_state == ReviewState.APPROVED


@pytest.mark.django_db
def test_it_refuses_a_narrowing_that_duplicates_another_claim(reviewer, run, broad):
    make_claim(run, SUPPORTED)
    with pytest.raises(DecisionRefused, match="already says exactly this"):
        do_narrow_claim(reviewer, broad, 1, SUPPORTED.upper())
    assert broad.decisions.count() == 0


@pytest.mark.django_db
def test_it_refuses_a_narrowing_that_changes_nothing(reviewer, broad):
    with pytest.raises(DecisionRefused, match="same as the current text"):
        do_narrow_claim(reviewer, broad, 1, f"  {broad.text} ")
