"""Browser: an owner shares a plan from its page; the reviewer reviews; an outsider gets 404."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import Claim, ReviewState, Verdict
from research.models import PlanMember
from tests.browser.support import login
from tests.factories import make_claim, make_plan, make_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def test_it_shares_a_plan_with_a_reviewer_who_reviews_while_an_outsider_gets_404(
    live_server, browser_page, author, reviewer, outsider
):
    page, base = browser_page, live_server.url
    plan = make_plan(author, question="Does vitamin D prevent falls?")
    claim = make_claim(
        make_run(plan),
        "Vitamin D supplementation reduced falls in older adults.",
        status=Verdict.UNCERTAIN,
        flags=["single-source"],
    )

    # The owner adds the reviewer from the plan page (htmx: no reload, no admin).
    login(page, base, "author")
    page.goto(base + plan.get_absolute_url())
    page.fill("#share-form input[name=username]", "reviewer")
    page.select_option("#share-form select[name=role]", "reviewer")
    page.click("#share-form button[type=submit]")
    page.locator("tr[data-member=reviewer]", has_text="reviewer").wait_for()
    assert "reviewer is now a reviewer of this plan" in page.inner_text("#plan-editor")
    assert PlanMember.objects.get(plan=plan, user=reviewer).role == "reviewer"

    # The reviewer finds the plan in their list and approves the flagged claim.
    page.context.clear_cookies()
    login(page, base, "reviewer")
    page.goto(base + reverse("research-list-plans"))
    page.click(f"text={plan.question}")
    assert "You are a reviewer of this plan" in page.inner_text("#members")
    page.goto(base + claim.get_absolute_url())
    # The claim is UNCERTAIN: approving it is an override and needs a written reason.
    page.fill("#approve-form textarea[name=note]", "Two trials in the library report it.")
    with page.expect_navigation():
        page.click("#approve-form button[type=submit]")
    claim.refresh_from_db()
    assert claim.review_state == ReviewState.APPROVED
    assert Claim.objects.get(pk=claim.pk).review_state == ReviewState.APPROVED

    # An outsider who has the link gets the styled 404, not a debug page or a hint.
    page.context.clear_cookies()
    login(page, base, "outsider")
    response = page.goto(base + plan.get_absolute_url())
    assert response is not None and response.status == 404
    assert page.inner_text("h1") == "Not found"
    assert page.locator("header.topbar").is_visible()
    assert plan.question not in page.content() and "URLconf" not in page.content()
    for url in (claim.get_absolute_url(), reverse("review-show-ledger", args=[claim.run.code])):
        assert page.goto(base + url).status == 404
