"""The run's mining candidates: counts on the ledger, a page listing every one with its reason."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from research.models import Subquestion
from review import views
from tests.factories import make_candidate, make_claim, make_passage, make_snapshot

QUESTION = "Does drug A lower blood pressure in adults?"
AIM = "We aimed to measure the effect of <script>alert(1)</script> drug A."


def _url(run, **params):
    url = reverse("review-show-candidates", args=[run.code])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def _plain(html):
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture
def scene(run):
    """A kept candidate (its claim), a merged wording, and two set aside at mining."""
    sub = Subquestion.objects.get(plan_version=run.plan_version, key="sq1")
    claim = make_claim(run, "Drug A lowers blood pressure.", subquestion=sub)
    passage = make_passage(make_snapshot(f"Intro. {QUESTION} {AIM} Outro.", title="Trial <i>"))
    return {
        "claim": claim,
        "kept": make_candidate(
            run, claim.text, state="kept", reason="became a claim", claim=claim, subquestion=sub
        ),
        "merged": make_candidate(
            run,
            "Drug A lowered blood pressure.",
            state="merged",
            reason="another wording of the same proposition",
            claim=claim,
            subquestion=sub,
        ),
        "question": make_candidate(run, QUESTION, passage=passage, subquestion=sub),
        "aim": make_candidate(
            run,
            AIM,
            reason="describes the study's aim or method, not a finding",
            passage=passage,
        ),
    }


@pytest.mark.django_db
def test_it_shows_candidate_counts_on_the_ledger(client, reviewer, run, scene):
    client.force_login(reviewer)
    html = client.get(reverse("review-show-ledger", args=[run.code])).content.decode()
    text = _plain(html)
    assert "4 candidates considered: 1 kept, 1 merged, 2 set aside at mining" in text
    assert f'href="{_url(run)}"' in html


@pytest.mark.django_db
def test_it_lists_dropped_candidates_with_their_reasons(client, reviewer, run, scene):
    client.force_login(reviewer)
    response = client.get(_url(run))
    assert response.status_code == 200
    html = response.content.decode()
    assert "a question, not a claim" in html
    assert "describes the study&#x27;s aim or method, not a finding" in html
    assert QUESTION in html
    assert "<script>alert" not in html and "<i>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Trial &lt;i&gt;" in html  # the source title, linked to its snapshot
    snapshot = scene["question"].snapshot
    assert f"{snapshot.source.get_absolute_url()}?snapshot={snapshot.code}" in html
    # Grouped by subquestion: sq1 first, the unassigned one after it.
    assert html.index("What is the evidence that X causes Y?") < html.index("(no subquestion)")
    assert html.index(QUESTION) < html.index("(no subquestion)") < html.index("We aimed")


@pytest.mark.django_db
def test_it_links_kept_and_merged_candidates_to_their_claim(client, reviewer, run, scene):
    client.force_login(reviewer)
    html = client.get(_url(run)).content.decode()
    claim_url = scene["claim"].get_absolute_url()
    assert html.count(f'href="{claim_url}"') == 2


@pytest.mark.django_db
def test_it_links_a_kept_candidate_to_the_quote_in_its_snapshot(client, reviewer, run):
    claim = make_claim(run, "Drug B halves the stroke rate in adults.")
    link = claim.evidence.get()
    kept = make_candidate(
        run, claim.text, state="kept", reason="became a claim", claim=claim, passage=link.passage
    )
    client.force_login(reviewer)
    html = client.get(_url(run)).content.decode()
    url = reverse("review-show-snapshot", args=[claim.code, link.snapshot.code])
    assert f"{url}?at={kept.quote_start}#quote" in html
    assert client.get(url, {"at": kept.quote_start}).status_code == 200


@pytest.mark.django_db
def test_it_filters_by_state(client, reviewer, run, scene):
    client.force_login(reviewer)
    dropped = client.get(_url(run, state="dropped")).context["page"]
    assert {c.text for c in dropped} == {QUESTION, AIM}
    merged = client.get(_url(run, state="merged")).context["page"]
    assert [c.text for c in merged] == ["Drug A lowered blood pressure."]
    everything = client.get(_url(run, state="bogus")).context["page"]
    assert len(everything.object_list) == 4


@pytest.mark.django_db
def test_it_paginates(client, reviewer, run, monkeypatch):
    monkeypatch.setattr(views, "CANDIDATE_PAGE_SIZE", 2)
    for n in range(5):
        make_candidate(run, f"Candidate number {n} is a question?")
    client.force_login(reviewer)
    first = client.get(_url(run, state="dropped"))
    assert len(first.context["page"].object_list) == 2
    assert "state=dropped&amp;page=2" in first.content.decode()
    last = client.get(_url(run, state="dropped", page=3)).context["page"]
    assert [c.text for c in last] == ["Candidate number 4 is a question?"]


@pytest.mark.django_db
def test_it_lets_a_read_only_member_see_the_candidates(client, researcher, run, scene):
    client.force_login(researcher)
    assert client.get(_url(run)).status_code == 200


@pytest.mark.django_db
def test_it_shows_an_outsider_404(client, outsider, run, scene):
    client.force_login(outsider)
    response = client.get(_url(run))
    assert response.status_code == 404
    assert QUESTION.encode() not in response.content


@pytest.mark.django_db
def test_it_sends_anonymous_visitors_to_login(client, run, scene):
    response = client.get(_url(run))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
