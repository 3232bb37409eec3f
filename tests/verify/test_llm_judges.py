"""Several LLM judges (``LLM_JUDGES``), each its own family, on two real local servers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import envjudges
from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.coverage import CoverageVerifier
from research.pipeline.verify.llm_judge import LLMJudge, split_passage
from research.pipeline.verify.records import ClaimInput, Flag, Status
from tests.fake_openai import FakeOpenAI, fake_openai

from .helpers import SUPPORT_QUOTE, SUPPORT_TEXT, item, judging

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")


def agrees(label: str, text: str) -> dict[str, Any]:
    quote = SUPPORT_QUOTE if SUPPORT_QUOTE in text else ""
    verdict = "supports" if quote else "insufficient"
    return {"verdict": verdict, "quote": quote, "confidence": 0.9}


def doubts(label: str, text: str) -> dict[str, Any]:
    return {"verdict": "insufficient", "quote": "", "confidence": 0.8}


@pytest.fixture
def servers(settings) -> Iterator[dict[str, FakeOpenAI]]:
    """Two fake OpenAI-compatible endpoints, judges ``llm-a`` (agrees) and ``llm-b``."""
    with fake_openai(judging(agrees)) as a, fake_openai(judging(doubts)) as b:
        running = {"llm-a": a, "llm-b": b}
        settings.LLM_JUDGES = [
            (name, fake.url, f"model-{name[-1]}") for name, fake in running.items()
        ]
        settings.LLM_BASE_URL = ""
        yield running


def prompts(fake: FakeOpenAI) -> list[str]:
    return [seen.prompt for seen in fake.requests]


def test_it_makes_each_configured_judge_its_own_family(servers):
    judges = LLMJudge.from_settings()
    assert [(j.family, j.name) for j in judges] == [
        ("llm-a", "llm-a:model-a"),
        ("llm-b", "llm-b:model-b"),
    ]


def test_it_does_not_pass_when_two_judges_disagree(servers):
    config = VerifyConfig(verifiers=(CoverageVerifier(), *LLMJudge.from_settings()))
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], config)
    assert verdict.status == Status.UNCERTAIN
    assert "supported by coverage, llm-a, but not corroborated by llm-b" in verdict.rationale
    assert {v.family for v in verdict.votes} == {"coverage", "llm-a", "llm-b"}
    assert all("[e1]" in prompt for prompt in prompts(servers["llm-a"]) + prompts(servers["llm-b"]))


def test_it_passes_when_the_doubting_judge_is_in_shadow_and_says_what_it_would_do(servers):
    config = VerifyConfig(
        verifiers=(CoverageVerifier(), *LLMJudge.from_settings()), shadow=frozenset({"llm-b"})
    )
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], config)
    assert verdict.status == Status.PASS
    assert verdict.shadow_status == Status.UNCERTAIN
    assert [v.shadow for v in verdict.votes if v.family == "llm-b"] == [True]


def test_it_marks_a_judge_whose_server_fails_unavailable_never_verified(servers, settings):
    settings.LLM_JUDGES = [*settings.LLM_JUDGES[:1], ("llm-c", "http://127.0.0.1:9/v1", "gone")]
    config = VerifyConfig(verifiers=(CoverageVerifier(), *LLMJudge.from_settings()))
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], config)
    assert verdict.status == Status.UNCERTAIN
    assert "transport error" in verdict.unavailable["llm-c"]
    assert "not corroborated by llm-c (failed:" in verdict.rationale
    assert Flag.FAMILY_UNAVAILABLE in verdict.flags


def test_it_shows_the_judge_a_long_passage_whole_in_parts(servers):
    filler = " ".join(
        f"Sentence {i} describes the trial setting in plain words." for i in range(90)
    )
    text = f"Trial. {filler} {SUPPORT_QUOTE} {filler}"
    assert len(text) > 2 * 2400
    parts = split_passage(item("e1", text))
    assert len(parts) >= 3 and all(len(p.text) <= 2400 for p in parts)
    assert "".join(p.text for p in parts).replace(" ", "") == text.replace(" ", "")
    config = VerifyConfig(verifiers=(CoverageVerifier(), LLMJudge.from_settings()[0]))
    verdict = verify_claim(CLAIM, [item("e1", text)], config)
    sent = "".join(prompts(servers["llm-a"]))
    assert all(p.text in sent for p in parts)  # nothing cut off
    assert "[e1~1]" in sent and f"[e1~{len(parts)}]" in sent
    [vote] = [v for v in verdict.votes if v.family == "llm-a"]
    assert (vote.evidence_id, vote.verdict, vote.quote) == ("e1", "supports", SUPPORT_QUOTE)
    assert verdict.status == Status.PASS


def test_it_refuses_a_malformed_judge_list(monkeypatch):
    monkeypatch.setenv("LLM_JUDGES", "llm-a|http://127.0.0.1:1/v1|m; llm-b|ftp://x|m")
    with pytest.raises(ImproperlyConfigured, match="not an http"):
        envjudges("LLM_JUDGES")
    monkeypatch.setenv("LLM_JUDGES", "llm-a|http://127.0.0.1:1/v1")
    with pytest.raises(ImproperlyConfigured, match="family\\|base_url\\|model"):
        envjudges("LLM_JUDGES")
    monkeypatch.setenv("LLM_JUDGES", "a|http://h/v1|m;a|http://h/v1|n")
    with pytest.raises(ImproperlyConfigured, match="listed twice"):
        envjudges("LLM_JUDGES")
