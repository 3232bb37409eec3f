from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import Claim
from research.models import Subquestion
from review.readers import subquestion_counts
from review.services.decisions import do_approve_claim
from tests.factories import make_claim


def _ledger(client, run, **params):
    return client.get(reverse("review-show-ledger", args=[run.code]), params)


def _texts(response):
    return [claim.text for claim in response.context["page"]]


@pytest.mark.django_db
def test_it_lists_every_claim_with_its_counts(client, reviewer, run, flagged, clean):
    client.force_login(reviewer)
    response = _ledger(client, run)
    assert response.status_code == 200
    assert set(_texts(response)) == {c.text for c in flagged + clean}
    html = response.content.decode()
    assert "overstatement" in html  # flags shown
    assert "5</strong> claims" in html
    assert 'id="subquestion-counts"' in html


@pytest.mark.django_db
def test_it_filters_by_status_and_decision(client, reviewer, run, flagged, clean):
    client.force_login(reviewer)
    assert _texts(_ledger(client, run, status="fail")) == [flagged[2].text]
    do_approve_claim(reviewer, flagged[0], 1, note="read the source: it states this")
    blocking = _texts(_ledger(client, run, review="blocking"))
    assert set(blocking) == {flagged[1].text, flagged[2].text}
    assert _texts(_ledger(client, run, review="approved")) == [flagged[0].text]


@pytest.mark.django_db
def test_it_searches_claim_text_and_quoted_passages(client, reviewer, run):
    make_claim(run, "Coffee improves memory.", quote="Coffee improves memory in mice.")
    make_claim(run, "Tea is popular.")
    client.force_login(reviewer)
    assert _texts(_ledger(client, run, q="coffee")) == ["Coffee improves memory."]
    assert _texts(_ledger(client, run, q="in mice")) == ["Coffee improves memory."]
    assert _texts(_ledger(client, run, q="nothing like this")) == []


@pytest.mark.django_db
def test_it_sorts(client, reviewer, run):
    for i, count in enumerate([2, 7, 4]):
        make_claim(run, f"Claim {i}.", support_count=count)
    client.force_login(reviewer)
    assert _texts(_ledger(client, run, sort="support")) == ["Claim 1.", "Claim 2.", "Claim 0."]
    assert _texts(_ledger(client, run, sort="text")) == ["Claim 0.", "Claim 1.", "Claim 2."]


@pytest.mark.django_db
def test_it_paginates_and_keeps_the_filters_in_page_links(client, reviewer, run):
    for i in range(55):
        make_claim(run, f"Numbered claim {i:02d}.", status="uncertain")
    client.force_login(reviewer)
    first = _ledger(client, run, status="uncertain")
    assert len(_texts(first)) == 50
    assert "status=uncertain&amp;page=2" in first.content.decode()
    second = _ledger(client, run, status="uncertain", page=2)
    assert len(_texts(second)) == 5


@pytest.mark.django_db
def test_it_answers_htmx_with_the_table_partial_only(client, reviewer, run, flagged):
    client.force_login(reviewer)
    response = client.get(
        reverse("review-show-ledger", args=[run.code]), {"status": "fail"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="ledger-table">')
    assert "<html" not in html
    assert flagged[2].text in html
    assert flagged[0].text not in html


@pytest.mark.django_db
def test_it_counts_claims_per_subquestion(client, reviewer, run, plan):
    sub = Subquestion.objects.get(plan_version=plan.current_version)
    make_claim(run, "A.", subquestion=sub, status="uncertain")
    make_claim(run, "B.", subquestion=sub)
    make_claim(run, "C.")
    rows = {row["subquestion__key"]: row for row in subquestion_counts(run)}
    assert (rows["sq1"]["total"], rows["sq1"]["flagged"], rows["sq1"]["blocking"]) == (2, 1, 1)
    assert rows[None]["total"] == 1
    client.force_login(reviewer)
    assert _texts(_ledger(client, run, subquestion="sq1")) == ["A.", "B."]


@pytest.mark.django_db
def test_it_hides_superseded_claims(client, reviewer, run, clean):
    Claim.objects.filter(pk=clean[0].pk).update(disposition="superseded")
    client.force_login(reviewer)
    assert _texts(_ledger(client, run)) == [clean[1].text]


@pytest.mark.django_db
def test_it_links_the_ledger_from_the_run_page(client, researcher, run):
    client.force_login(researcher)
    html = client.get(run.get_absolute_url()).content.decode()
    assert f'href="{reverse("review-show-ledger", args=[run.code])}"' in html
    assert f'href="{reverse("review-show-audit", args=[run.code])}"' in html
