"""The LLM atomizer behind a real OpenAI-compatible HTTP server on 127.0.0.1.

The server replies from a script keyed by a word of the passage it is sent: valid findings,
invalid JSON, claims whose quote is not in the passage, claims that say more than their
quote, method sentences, a missing claim list, an HTTP error and a reply slower than the
client's timeout. Every kept claim must be anchored verbatim; everything else is dropped
with the reason, or (when the call fails) the rule-based miner covers the passage.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from ledger.models import Candidate, Claim, EvidenceLink
from ledger.readers import passage_input
from research.models import Subquestion
from research.pipeline.claims import (
    MineConfig,
    PassageInput,
    RunInput,
    SubquestionInput,
    mine_claims_llm,
    mine_run,
)
from research.pipeline.claims.roles import FINDING_ROLES
from research.pipeline.text import passage_fingerprint
from research.providers.llm import DEFAULT_MAX_TOKENS, LLMClient, LLMConfig
from research.stages import mine
from tests.factories import make_passage, make_plan, make_run, make_snapshot
from tests.fake_openai import FakeOpenAI, Seen, fake_openai

TRIAL = (
    "RESULTS In 3,270 older women, vitamin D3 and calcium reduced hip fractures by 43 percent. "
    "Central DXA osteodensitometry was performed.  CONCLUSION Supplements  prevent  fractures."
)
SCRIPT: dict[str, Any] = {
    "TRIAL": {
        "claims": [
            {
                "text": "Vitamin D3 and calcium reduced hip fractures by 43 percent in 3,270 "
                "older women.",
                "quote": "In 3,270 older women, vitamin D3 and calcium reduced hip fractures by "
                "43 percent.",
                "type": "numerical",
            },
            {
                # whitespace differs from the passage: still anchored to the passage's own text
                "text": "Vitamin D and calcium supplements prevent fractures.",
                "quote": "Supplements prevent fractures.",
                "type": "causal",
            },
            {
                "text": "Vitamin D cures cancer.",
                "quote": "Vitamin D cures cancer in every patient.",
                "type": "causal",
            },
            {
                "text": "Vitamin D supplements cut mortality among nursing home residents by half.",
                "quote": "In 3,270 older women, vitamin D3 and calcium reduced hip fractures by "
                "43 percent.",
            },
            {
                "text": "Bone density was measured by central DXA osteodensitometry.",
                "quote": "Central DXA osteodensitometry was performed.",
            },
            "not an object",
        ]
    },
    "GARBLED": "this is {not json",
    "NOLIST": {"findings": []},
    "DOWN": 503,
    "SLOW": "sleep",
}


def scripted(request: Seen) -> str | dict[str, Any] | int:
    """The script's reply for the first of its words found in the passage sent."""
    reply: str | dict[str, Any] | int = SCRIPT[next(k for k in SCRIPT if k in request.prompt)]
    if reply == "sleep":
        time.sleep(1.5)
        reply = SCRIPT["TRIAL"]
    return reply


@pytest.fixture
def server():
    with fake_openai(scripted) as fake:
        yield fake


def client(fake: FakeOpenAI, timeout_s: float = 5.0) -> LLMClient:
    return LLMClient(LLMConfig(base_url=fake.url, model="fake-atomizer", timeout_s=timeout_s))


def passage(pid: str, text: str) -> PassageInput:
    return PassageInput(pid, text, passage_fingerprint(text), source_key=f"doc:{pid}")


def test_it_keeps_only_claims_anchored_verbatim_and_says_why_it_dropped_the_rest(server):
    result = mine_claims_llm([passage("p1", TRIAL + " TRIAL")], client(server))
    assert server.requests[0].body["model"] == "fake-atomizer"
    asked = server.requests[0].body
    assert asked["response_format"]["type"] == "json_schema"
    assert asked["response_format"]["json_schema"]["name"] == "atomic_claims"
    assert asked["max_tokens"] == DEFAULT_MAX_TOKENS
    kept = {c.text: c for c in result.claims}
    assert set(kept) == {
        "Vitamin D3 and calcium reduced hip fractures by 43 percent in 3,270 older women.",
        "Vitamin D and calcium supplements prevent fractures.",
    }
    for claim in kept.values():
        anchor = claim.anchors[0]
        assert (TRIAL + " TRIAL")[anchor.start : anchor.end] == anchor.quote
        # a statement too: the role model reads "… supplements prevent fractures." as
        # background (kept as a statement), not as a result
        assert claim.origin == "llm:fake-atomizer" and claim.role in FINDING_ROLES
    assert kept["Vitamin D and calcium supplements prevent fractures."].anchors[0].quote == (
        "Supplements  prevent  fractures."
    )
    reasons = {d.text: d.reason for d in result.dropped}
    assert reasons["Vitamin D cures cancer."] == "llm atomizer: quote not verbatim in the passage"
    assert (
        "says more than its quote"
        in reasons["Vitamin D supplements cut mortality among nursing home residents by half."]
    )
    # dropped still, though no longer as a method: the role model reads its quote as one
    # only at p 0.37, below the threshold, and the claim's words outrun the quote
    why = reasons["Bone density was measured by central DXA osteodensitometry."]
    assert "says more than its quote" in why
    assert reasons["(empty)"] == "llm atomizer: quote not verbatim in the passage"


@pytest.mark.parametrize(
    ("word", "why"),
    [
        ("GARBLED", "reply is not JSON"),
        ("NOLIST", "reply has no 'claims' list"),
        ("DOWN", "HTTP 503"),
        ("SLOW", "timed out"),
    ],
)
def test_it_falls_back_to_the_rules_for_a_passage_the_model_fails_on(server, word, why):
    text = f"{word} trial. In older women, vitamin D reduced hip fractures compared with placebo."
    result = mine_claims_llm([passage("p9", text)], client(server, timeout_s=0.5))
    [note] = result.notes.values()
    assert why in note and note.endswith("rules used instead")
    assert [c.origin for c in result.claims] == ["rules"]
    assert result.claims[0].anchors[0].quote == (
        "In older women, vitamin D reduced hip fractures compared with placebo."
    )


@pytest.mark.django_db
def test_it_mines_with_the_configured_atomizer_and_records_its_failures(server, settings, author):
    settings.LLM_BASE_URL, settings.LLM_MODEL = server.url, "fake-atomizer"
    plan = make_plan(author, "Does vitamin D reduce hip fractures in older women?")
    run = make_run(plan, state="mining")
    good = make_passage(make_snapshot(TRIAL + " TRIAL", title="Vitamin D trial"))
    bad = make_passage(
        make_snapshot(
            "GARBLED. Hip fractures fell with vitamin D in older women of a second trial."
        )
    )
    inputs = (passage_input(good), passage_input(bad))
    sq = Subquestion.objects.get(plan_version=run.plan_version, key="sq1")
    mining = mine_run(
        RunInput(plan.question, (SubquestionInput("sq1", sq.text, inputs),)),
        MineConfig(),
        propose=mine.propose(),
    )
    mine.save(run, mining)
    origins = set(Claim.objects.filter(run=run).values_list("candidates__origin", flat=True))
    assert origins == {"llm:fake-atomizer", "rules"}
    for link in EvidenceLink.objects.filter(claim__run=run, is_anchor=True):
        assert link.snapshot.text[link.quote_start : link.quote_end] == link.quote
    assert Candidate.objects.filter(run=run, reason__startswith="llm atomizer:").exists()
    assert any("rules used instead" in text for text in mining.notes.values())


def test_the_atomizer_offers_the_ledgers_claim_types():
    """atomize.TYPES repeats ledger.models.ClaimType: the pipeline, a layer below the
    models, does not import them, so the two lists are checked here."""
    from ledger.models import ClaimType
    from research.pipeline.claims.atomize import TYPES

    assert sorted(TYPES) == sorted(ClaimType.values)
