"""Browser: the ledger shows what mining found out — relevance, design, contested pairs,
evidence gaps — and the candidates page shows off-topic and off-outcome candidates with
their scores."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from ledger.models import Candidate, Claim, ContestedPair
from ledger.readers import passage_input
from research.models import Subquestion
from research.pipeline.claims import RunInput, SubquestionInput, mine_run
from research.pipeline.claims.scope import parse_scope
from research.providers.embedder import Embedder
from research.stages.mine import save
from tests.browser.support import login
from tests.factories import make_passage, make_plan, make_run, make_snapshot

QUESTION = "Does vitamin D supplementation reduce the risk of fractures in older adults?"
SOURCES = [
    (
        "Vitamin D and calcium in elderly women: a randomized controlled trial",
        "RESULTS In this randomized controlled trial of 3,270 women aged 69 to 106 years, "
        "vitamin D3 and calcium supplementation reduced the incidence of hip fractures.",
    ),
    (
        "Annual vitamin D and fractures: a randomized trial",
        "In this randomized, placebo-controlled trial of women aged 70 years or older, "
        "vitamin D3 and calcium supplementation did not reduce the incidence of hip fractures.",
    ),
    (
        "Benzodiazepines and injurious falls in community dwelling elders",
        "Benzodiazepine use was associated with an increased risk of injurious falls in "
        "elderly people.",
    ),
    (
        "Plasma 25-hydroxyvitamin D and colorectal cancer risk in older women",
        "Vitamin D supplementation was associated with a lower risk of colorectal cancer in "
        "older women.",
    ),
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def mined_run(author):
    """A run mined by the real miner (sentence encoder included) and saved by its writers."""
    plan = make_plan(author, question=QUESTION)
    run = make_run(plan)
    sq = Subquestion.objects.get(plan_version=run.plan_version, key="sq1")
    Subquestion.objects.create(
        plan_version=run.plan_version, key="sq2", text="How is it defined?", position=1
    )
    passages = tuple(
        passage_input(make_passage(make_snapshot(text, title=title)), 1.0)
        for title, text in SOURCES
    )
    inp = RunInput(
        QUESTION,
        (
            SubquestionInput("sq1", sq.text, passages, ("vitamin D fractures",), 3),
            SubquestionInput("sq2", "How is it defined?", (), ("vitamin D definition",), 1),
        ),
        scope=parse_scope("adults over 60"),
    )
    save(run, mine_run(inp, encode=Embedder().encode))
    return run


def test_it_shows_relevance_design_contested_pairs_and_gaps_in_the_ledger(
    live_server, browser_page, mined_run
):
    run = mined_run
    page = browser_page
    login(page, live_server.url, "author")
    page.goto(live_server.url + reverse("review-show-ledger", args=[run.code]))

    reduces = Claim.objects.get(run=run, direction="decreases")
    null = Claim.objects.get(run=run, direction="no effect")
    assert ContestedPair.objects.filter(run=run).count() == 1
    row = page.locator("#ledger-table tr", has_text=reduces.text[:60])
    relevance = row.locator("td.relevance").inner_text()
    assert re.fullmatch(r"0\.\d\d #\d+", relevance.strip()), relevance
    assert row.locator(".design").inner_text() == "randomized controlled trial"
    badge = row.locator("a.contested-badge")
    assert null.text[:40] in badge.inner_text()

    pairs = page.locator("#contested-pairs")
    assert reduces.text in pairs.inner_text() and null.text in pairs.inner_text()
    assert "'decreases'" in pairs.inner_text() and "'no effect'" in pairs.inner_text()
    gaps = page.locator("#evidence-gaps")
    assert "How is it defined?" in gaps.inner_text()
    assert "vitamin D definition" in gaps.inner_text()  # what was searched

    with page.expect_navigation():
        badge.click()
    contested = page.locator("#contested")
    assert reduces.text in contested.inner_text() and null.text in contested.inner_text()
    finding = page.locator("#finding").inner_text()
    assert finding.count("randomized controlled trial") == 1
    assert "outcome named: fractures" in finding  # how the claim names the outcome asked


def test_it_lists_an_off_topic_candidate_with_its_score(live_server, browser_page, mined_run):
    run = mined_run
    off = Candidate.objects.get(run=run, text__startswith="Benzodiazepine use")
    assert off.state == "dropped" and off.reason.startswith("off-topic (relevance 0.")
    page = browser_page
    login(page, live_server.url, "author")
    page.goto(live_server.url + reverse("review-show-candidates", args=[run.code]))
    page.click("#candidate-why >> text=Off-topic")
    page.wait_for_url(re.compile(r"why=off-topic"))
    row = page.locator("tr.candidate", has_text="Benzodiazepine use")
    assert row.locator("td.relevance").inner_text() == f"{off.relevance:.2f}"
    assert "off-topic (relevance" in row.inner_text()
    assert "3,270 women" not in page.locator("#candidate-table").inner_text()

    # on the subject, off the outcome: vitamin D and colorectal cancer, not fractures
    other = Candidate.objects.get(run=run, text__contains="colorectal cancer")
    assert other.state == "dropped" and other.reason.startswith("off-outcome (relevance 0.")
    page.click("#candidate-why >> text=Off-outcome")
    page.wait_for_url(re.compile(r"why=off-outcome"))
    row = page.locator("tr.candidate", has_text="colorectal cancer")
    assert row.locator("td.relevance").inner_text() == f"{other.relevance:.2f}"
    assert "not fractures" in row.inner_text() or "outcomes asked: fractures" in row.inner_text()
    assert "Benzodiazepine use" not in page.locator("#candidate-table").inner_text()
