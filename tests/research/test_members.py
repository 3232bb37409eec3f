"""Plan owners share plans from the plan page: members with roles, no Django admin needed."""

from __future__ import annotations

import pytest
from django.urls import reverse

from research.models import PlanMember
from tests.factories import make_claim, make_plan, make_run

pytestmark = pytest.mark.django_db


def _share(client, plan, username, role, **extra):
    url = reverse("research-share-plan", args=[plan.code])
    return client.post(url, {"username": username, "role": role}, **extra)


def test_it_lets_the_owner_add_a_reviewer_who_then_sees_the_plan_and_decides(
    client, author, reviewer
):
    plan = make_plan(author)
    claim = make_claim(make_run(plan), "Vitamin D reduced falls in older adults.")
    client.force_login(reviewer)
    assert client.get(plan.get_absolute_url()).status_code == 404  # not shared yet

    client.force_login(author)
    response = _share(client, plan, "reviewer", "reviewer")
    assert response.status_code == 302
    assert PlanMember.objects.get(plan=plan, user=reviewer).role == "reviewer"

    client.force_login(reviewer)
    assert plan.question in client.get(reverse("research-list-plans")).content.decode()
    page = client.get(plan.get_absolute_url()).content.decode()
    assert "You are a reviewer of this plan" in page
    approve = client.post(reverse("review-approve-claim", args=[claim.code]), {"version": 1})
    assert approve.status_code in (200, 302)
    claim.refresh_from_db()
    assert claim.review_state == "approved"


def test_it_gives_each_role_its_rights_only(
    client, author, researcher, reviewer, django_user_model
):
    viewer = django_user_model.objects.create_user("viewer", password="pw-viewer")
    plan = make_plan(author)
    claim = make_claim(make_run(plan), "Vitamin D reduced falls in older adults.")
    client.force_login(author)
    for user, role in ((viewer, "viewer"), (researcher, "researcher"), (reviewer, "viewer")):
        assert _share(client, plan, user.username, role).status_code == 302
    start = reverse("research-start-run", args=[plan.code])
    approve = reverse("review-approve-claim", args=[claim.code])
    for user, may_edit in ((viewer, False), (researcher, True), (reviewer, False)):
        client.force_login(user)
        assert client.get(plan.get_absolute_url()).status_code == 200
        assert (client.post(start, {"base_version": 1}).status_code != 403) == may_edit
        assert client.post(approve, {"version": 1}).status_code == 403
        assert _share(client, plan, "outsider", "viewer").status_code == 403  # owner only


def test_it_changes_a_role_and_removes_a_member(client, author, reviewer):
    plan = make_plan(author)
    client.force_login(author)
    _share(client, plan, "reviewer", "viewer")
    _share(client, plan, "reviewer", "reviewer")
    assert PlanMember.objects.get(plan=plan, user=reviewer).role == "reviewer"
    remove = reverse("research-unshare-plan", args=[plan.code])
    response = client.post(remove, {"username": "reviewer"}, HTTP_HX_REQUEST="true")
    assert "reviewer was removed from this plan" in response.content.decode()
    client.force_login(reviewer)
    assert client.get(plan.get_absolute_url()).status_code == 404


def test_it_explains_an_unknown_user_or_role(client, author):
    plan = make_plan(author)
    client.force_login(author)
    unknown = _share(client, plan, "nobody", "reviewer", HTTP_HX_REQUEST="true")
    assert "No active user is named" in unknown.content.decode()
    bad_role = _share(client, plan, "author", "owner")
    assert bad_role.status_code == 400


def test_it_hides_the_sharing_endpoints_from_outsiders(client, author, outsider):
    plan = make_plan(author)
    client.force_login(outsider)
    assert _share(client, plan, "outsider", "reviewer").status_code == 404
    remove = reverse("research-unshare-plan", args=[plan.code])
    assert client.post(remove, {"username": "author"}).status_code == 404
    assert not PlanMember.objects.exists()
