"""Issue 26, item 3: bulk approval never offers a claim with a possible contradiction or
one resting on a single weak vote."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import ReviewState
from review.services.decisions import do_bulk_approve
from review.services.gate import bulk_eligible, gate_status, ledger_claims
from tests.factories import make_claim, make_passage, make_snapshot
from tests.review.votes import add_support_votes, add_vote


def _offered(run):
    return set(bulk_eligible(ledger_claims(run)).values_list("text", flat=True))


@pytest.mark.django_db
def test_it_offers_a_pass_claim_two_families_support_strongly(run, clean):
    assert _offered(run) == {c.text for c in clean}
    assert gate_status(run).bulk_eligible == 2


@pytest.mark.django_db
def test_it_never_offers_a_claim_with_a_possible_contradiction(run, reviewer):
    on_link = make_claim(run, "Drug A lowers blood pressure.")
    add_support_votes(on_link)
    sentence = "A second trial found no effect of Drug A."
    other = make_passage(make_snapshot(sentence))
    on_link.evidence.create(
        passage=other,
        snapshot=other.snapshot,
        pool="refute",
        relation="possible-contradiction",
        quote=sentence,
        quote_start=0,
        quote_end=len(sentence),
        passage_fingerprint=other.fingerprint,
    )
    set_aside = make_claim(run, "Drug A is taken once daily.")
    add_support_votes(set_aside)
    add_vote(set_aside, "rules", "contradicts", 0.4)  # counted, though set aside
    shadow = make_claim(run, "Drug A was approved in 2001.")
    add_support_votes(shadow)
    add_vote(shadow, "nli", "contradicts", 0.9, shadow=True)  # never counted
    assert _offered(run) == {"Drug A was approved in 2001."}
    assert do_bulk_approve(reviewer, run) == 1
    on_link.refresh_from_db()
    assert on_link.review_state == ReviewState.UNREVIEWED


@pytest.mark.django_db
def test_it_never_offers_a_claim_resting_on_a_single_weak_vote(run):
    # The navigation sentence of issue 26: support at a low calibrated score.
    weak = make_claim(run, "See the documentation of those projects for details.")
    add_support_votes(weak, score=0.32)
    alone = make_claim(run, "Drug A is taken once daily.")
    add_support_votes(alone, families=("learned",), score=0.95)
    one_strong = make_claim(run, "Drug A was approved in 2001.")
    add_vote(one_strong, "learned", "supports", 0.9)
    add_vote(one_strong, "align", "supports", 0.3)
    checked = make_claim(run, "Drug A lowers blood pressure.")
    add_support_votes(checked, families=("learned", "rules"))  # a check family is no judge
    discarded = make_claim(run, "Drug A costs little.")
    add_vote(discarded, "learned", "supports", 0.9)
    add_vote(discarded, "align", "supports", 0.9, valid=False, discard_reason="quote not found")
    none = make_claim(run, "Drug A has a generic form.")
    assert _offered(run) == set()
    assert none.votes.count() == 0


@pytest.mark.django_db
def test_it_says_how_many_claims_the_ledger_button_approves(client, reviewer, run, clean):
    weak = make_claim(run, "See the documentation of those projects for details.")
    add_support_votes(weak, score=0.32)
    client.force_login(reviewer)
    page = client.get(reverse("review-show-ledger", args=[run.code])).content.decode()
    assert "Approve 2 unflagged PASS claims" in page
