"""Issue 26, item 9: narrowing a claim keeps its allowed scope and "must not say" unless
the reviewer changed them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review.records import Reverification
from review.services import decisions
from review.services.decisions import do_narrow_claim
from tests.factories import make_claim

SCOPE = "adults with hypertension"
MUST_NOT = ["works in children", "cures hypertension"]
NARROWED = "Drug A lowered blood pressure in adults with hypertension."


@pytest.fixture
def passed(run):
    return make_claim(
        run,
        "Drug A lowers blood pressure in adults.",
        allowed_scope=SCOPE,
        prohibited_overstatements=MUST_NOT,
    )


@pytest.fixture(autouse=True)
def verified(monkeypatch):
    passing = Reverification.from_json({"available": True, "status": "pass"})
    monkeypatch.setattr(decisions, "reverify", lambda claim, text: passing)


def _narrow(client, claim, **fields):
    url = reverse("review-narrow-claim", args=[claim.code])
    return client.post(url, {"version": claim.version, "text": NARROWED, **fields})


@pytest.mark.django_db
def test_it_keeps_scope_and_must_not_say_when_the_form_leaves_them_as_they_were(
    client, reviewer, passed
):
    client.force_login(reviewer)
    page = client.get(passed.get_absolute_url()).content.decode()
    assert SCOPE in page.split('name="allowed_scope"')[1].split("</textarea>")[0]
    prefilled = page.split('name="prohibited_overstatements"')[1].split("</textarea>")[0]
    assert "works in children" in prefilled and "cures hypertension" in prefilled
    response = _narrow(
        client, passed, allowed_scope=SCOPE, prohibited_overstatements="\n".join(MUST_NOT)
    )
    assert response.status_code == 302
    passed.refresh_from_db()
    assert (passed.text, passed.allowed_scope) == (NARROWED, SCOPE)
    assert passed.prohibited_overstatements == MUST_NOT
    decision = passed.decisions.get()
    assert (decision.allowed_scope, decision.prohibited_overstatements) == (SCOPE, MUST_NOT)


@pytest.mark.django_db
def test_it_keeps_them_when_they_are_not_posted(client, reviewer, passed):
    client.force_login(reviewer)
    assert _narrow(client, passed).status_code == 302
    passed.refresh_from_db()
    assert (passed.allowed_scope, passed.prohibited_overstatements) == (SCOPE, MUST_NOT)


@pytest.mark.django_db
def test_it_takes_what_the_reviewer_changed(client, reviewer, passed):
    client.force_login(reviewer)
    response = _narrow(client, passed, allowed_scope="adults over 60", prohibited_overstatements="")
    assert response.status_code == 302
    passed.refresh_from_db()
    assert (passed.allowed_scope, passed.prohibited_overstatements) == ("adults over 60", [])


@pytest.mark.django_db
def test_a_scope_that_was_the_claims_own_wording_follows_the_wording(reviewer, run):
    claim = make_claim(run, "Drug A lowers blood pressure in adults.")
    claim.allowed_scope = claim.text  # what a PASS verdict writes
    claim.save(update_fields=["allowed_scope"])
    do_narrow_claim(reviewer, claim, claim.version, NARROWED)
    claim.refresh_from_db()
    assert claim.allowed_scope == NARROWED
