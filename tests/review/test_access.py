from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import ReviewState
from review.models import ReviewDecision


def _claim_urls(claim):
    snapshot = claim.evidence.get().snapshot
    return [
        reverse("review-show-claim", args=[claim.code]),
        reverse("review-show-snapshot", args=[claim.code, snapshot.code]),
    ]


def _run_urls(run):
    return [
        reverse(name, args=[run.code])
        for name in ("review-show-ledger", "review-show-audit", "review-show-queue")
    ]


def _decide_posts(claim):
    return [
        (reverse("review-approve-claim", args=[claim.code]), {"version": claim.version}),
        (
            reverse("review-narrow-claim", args=[claim.code]),
            {"version": claim.version, "text": "Drug A lowers blood pressure."},
        ),
        (
            reverse("review-reject-claim", args=[claim.code]),
            {"version": claim.version, "reason_code": "unsupported"},
        ),
    ]


@pytest.mark.django_db
def test_it_shows_an_outsider_404_for_every_page_of_a_plan(client, outsider, run, flagged):
    client.force_login(outsider)
    for url in _run_urls(run) + _claim_urls(flagged[0]):
        assert client.get(url).status_code == 404, url


@pytest.mark.django_db
def test_it_gives_an_outsider_404_on_decide(client, outsider, run, flagged):
    client.force_login(outsider)
    for url, data in _decide_posts(flagged[0]):
        assert client.post(url, data).status_code == 404, url
    bulk = reverse("review-approve-claims", args=[run.code])
    assert client.post(bulk).status_code == 404
    assert ReviewDecision.objects.count() == 0


@pytest.mark.django_db
def test_it_lets_a_researcher_read_but_not_decide(client, researcher, run, flagged, clean):
    client.force_login(researcher)
    for url in _run_urls(run)[:2] + _claim_urls(flagged[0]):
        assert client.get(url).status_code == 200, url
    for url, data in _decide_posts(flagged[0]):
        assert client.post(url, data).status_code == 403, url
    bulk = reverse("review-approve-claims", args=[run.code])
    assert client.post(bulk).status_code == 403
    assert ReviewDecision.objects.count() == 0
    flagged[0].refresh_from_db()
    assert flagged[0].review_state == ReviewState.UNREVIEWED


@pytest.mark.django_db
def test_it_hides_decision_forms_from_a_researcher(client, researcher, flagged):
    client.force_login(researcher)
    html = client.get(flagged[0].get_absolute_url()).content.decode()
    assert 'id="approve-form"' not in html
    assert "only reviewers" in html


@pytest.mark.django_db
def test_it_refuses_a_reviewer_who_is_not_on_the_plan(client, django_user_model, run, flagged):
    from django.contrib.auth.models import Group

    stranger = django_user_model.objects.create_user("stranger", password="pw")
    stranger.groups.add(Group.objects.get(name="reviewer"))
    client.force_login(stranger)
    url, data = _decide_posts(flagged[0])[0]
    assert client.post(url, data).status_code == 404


@pytest.mark.django_db
def test_it_refuses_get_on_decision_urls(client, reviewer, flagged):
    client.force_login(reviewer)
    for url, _ in _decide_posts(flagged[0]):
        assert client.get(url).status_code == 405


@pytest.mark.django_db
def test_it_sends_anonymous_visitors_to_login(client, run):
    response = client.get(reverse("review-show-ledger", args=[run.code]))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
