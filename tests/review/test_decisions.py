from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from ledger.models import ReviewState
from review.models import ReviewDecision
from review.services.decisions import DecisionConflict, do_approve_claim, do_reject_claim
from tests.factories import add_member


def _approve(client, claim, version=None):
    url = reverse("review-approve-claim", args=[claim.code])
    version = claim.version if version is None else version
    return client.post(url, {"version": version, "note": "read the source: it states this"})


@pytest.mark.django_db
def test_it_approves_and_moves_on_to_the_next_blocking_claim(client, reviewer, flagged):
    client.force_login(reviewer)
    response = _approve(client, flagged[0])
    assert response.status_code == 302
    assert response["Location"] == flagged[1].get_absolute_url()
    decision = ReviewDecision.objects.get()
    assert (decision.action, decision.reviewer, decision.claim_version) == (
        "approve",
        reviewer,
        1,
    )
    assert decision.text_before == decision.text_after == flagged[0].text
    flagged[0].refresh_from_db()
    assert (flagged[0].review_state, flagged[0].version) == (ReviewState.APPROVED, 2)


@pytest.mark.django_db
def test_it_rejects_with_a_reason_from_the_list(client, reviewer, flagged):
    client.force_login(reviewer)
    url = reverse("review-reject-claim", args=[flagged[2].code])
    response = client.post(
        url, {"version": 1, "reason_code": "overstated", "reason": "Only lowers it."}
    )
    assert response.status_code == 302
    decision = ReviewDecision.objects.get()
    assert (decision.action, decision.reason_code, decision.reason) == (
        "reject",
        "overstated",
        "Only lowers it.",
    )


@pytest.mark.django_db
def test_it_shows_form_errors_for_a_reject_without_reason(client, reviewer, flagged):
    client.force_login(reviewer)
    url = reverse("review-reject-claim", args=[flagged[2].code])
    response = client.post(url, {"version": 1, "reason_code": "other", "reason": ""})
    assert response.status_code == 400
    assert "Explain the reason" in response.content.decode()
    assert ReviewDecision.objects.count() == 0


@pytest.mark.django_db
def test_it_tells_the_second_reviewer_about_a_conflict(client, reviewer, flagged, plan):
    from django.contrib.auth.models import Group, User

    second = User.objects.create_user("second", password="pw")
    second.groups.add(Group.objects.get(name="reviewer"))
    add_member(plan, second)
    other = Client()
    other.force_login(second)
    client.force_login(reviewer)
    claim = flagged[0]
    # Both loaded the capsule at version 1.
    assert client.get(claim.get_absolute_url()).status_code == 200
    assert other.get(claim.get_absolute_url()).status_code == 200

    assert _approve(client, claim, version=1).status_code == 302
    url = reverse("review-reject-claim", args=[claim.code])
    response = other.post(url, {"version": 1, "reason_code": "other", "reason": "My words"})

    assert response.status_code == 409
    html = response.content.decode()
    assert "Conflict: reviewer recorded “approve”" in html
    assert "My words" in html  # what the second reviewer typed is still on the page
    assert 'name="version" value="2"' in html
    decision = ReviewDecision.objects.get()
    assert decision.reviewer.username == "reviewer"
    claim.refresh_from_db()
    assert claim.review_state == ReviewState.APPROVED


@pytest.mark.django_db
def test_it_raises_a_conflict_in_the_service_for_a_stale_version(reviewer, flagged):
    claim = flagged[1]
    do_approve_claim(reviewer, claim, 1, note="read the source: it states this")
    with pytest.raises(DecisionConflict):
        do_reject_claim(reviewer, claim, 1, "unsupported")
    assert claim.decisions.count() == 1


@pytest.mark.django_db
def test_it_redirects_to_the_ledger_when_the_gate_opens(client, reviewer, run, flagged):
    for claim in flagged[:2]:
        do_approve_claim(reviewer, claim, claim.version, note="read the source: it states this")
    client.force_login(reviewer)
    url = reverse("review-reject-claim", args=[flagged[2].code])
    response = client.post(url, {"version": 1, "reason_code": "unsupported"}, follow=True)
    assert response.request["PATH_INFO"] == reverse("review-show-ledger", args=[run.code])
    assert "synthesis may start" in response.content.decode()


@pytest.mark.django_db
def test_it_starts_the_queue_at_the_first_blocking_claim(client, reviewer, run, flagged):
    client.force_login(reviewer)
    response = client.get(reverse("review-show-queue", args=[run.code]))
    assert response["Location"] == flagged[0].get_absolute_url()


@pytest.mark.django_db
def test_it_bulk_approves_from_the_ledger(client, reviewer, run, flagged, clean):
    client.force_login(reviewer)
    response = client.post(reverse("review-approve-claims", args=[run.code]), follow=True)
    assert "Approved 2 unflagged PASS claim" in response.content.decode()
    assert ReviewDecision.objects.filter(action="approve").count() == 2


@pytest.mark.django_db(transaction=True)
def test_it_lets_exactly_one_of_two_simultaneous_decisions_win(reviewer, flagged):
    import threading

    from django.db import connection

    claim = flagged[0]
    barrier = threading.Barrier(2)
    outcomes = []

    def decide(action):
        barrier.wait()
        try:
            if action == "approve":
                do_approve_claim(reviewer, claim, 1, note="read the source: it states this")
            else:
                do_reject_claim(reviewer, claim, 1, "unsupported")
            outcomes.append("saved")
        except DecisionConflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=decide, args=(a,)) for a in ("approve", "reject")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["conflict", "saved"]
    decision = ReviewDecision.objects.get(claim=claim)
    claim.refresh_from_db()
    assert claim.version == 2
    assert claim.review_state == {"approve": "approved", "reject": "rejected"}[decision.action]
