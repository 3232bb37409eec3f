from __future__ import annotations

import json
from typing import Any

import httpx

from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.admission import FABRICATED_QUOTE, INVENTED_EVIDENCE
from research.pipeline.verify.aggregate import AggregateConfig
from research.pipeline.verify.llm_judge import LLMJudge
from research.pipeline.verify.records import ClaimInput, Status
from research.providers.llm import LLMClient, LLMConfig
from research.providers.retry import RetryPolicy
from tests.fake_openai import completion

from .helpers import SUPPORT_QUOTE, SUPPORT_TEXT, item

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")


def judge_replying(votes, seen=None):
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(json.loads(request.content))
        return httpx.Response(200, json=completion({"votes": votes}))

    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="fake-judge")
    return LLMJudge(LLMClient(config, transport=httpx.MockTransport(handler)))


def test_it_discards_a_judge_vote_whose_quote_is_fabricated():
    fabricated = "Aspirin cured fever in every adult who took it."
    judge = judge_replying(
        [{"evidence_id": "e1", "verdict": "supports", "quote": fabricated, "confidence": 0.95}]
    )
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], VerifyConfig(verifiers=(judge,)))
    assert verdict.status == Status.UNVERIFIABLE  # no valid vote at all
    assert verdict.votes == []
    assert [d.reason for d in verdict.discarded] == [FABRICATED_QUOTE]


def test_it_discards_a_judge_vote_on_an_invented_evidence_id():
    judge = judge_replying(
        [{"evidence_id": "e42", "verdict": "supports", "quote": SUPPORT_QUOTE, "confidence": 0.9}]
    )
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], VerifyConfig(verifiers=(judge,)))
    assert [d.reason for d in verdict.discarded] == [INVENTED_EVIDENCE]
    assert verdict.status == Status.UNVERIFIABLE


def test_it_counts_a_verbatim_judge_vote_and_sends_only_admitted_passages():
    seen: list[dict[str, Any]] = []
    judge = judge_replying(
        [{"evidence_id": "e1", "verdict": "supports", "quote": SUPPORT_QUOTE, "confidence": 0.9}],
        seen,
    )
    one_family = VerifyConfig(verifiers=(judge,), aggregate=AggregateConfig(quorum=1))
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], one_family)
    assert verdict.status == Status.PASS
    assert verdict.votes[0].verifier == "llm:fake-judge"
    prompt = seen[0]["messages"][1]["content"]
    assert "[e1]" in prompt and CLAIM.text in prompt


def test_it_records_a_failing_judge_without_inventing_votes():
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503)

    retry = RetryPolicy(max_attempts=3, backoff_s=0)
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="down", retry=retry)
    judge = LLMJudge(LLMClient(config, transport=httpx.MockTransport(handler)))
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], VerifyConfig(verifiers=(judge,)))
    assert verdict.status == Status.UNVERIFIABLE
    assert "failed" in verdict.notes["llm:down"]
    assert "HTTP 503" in verdict.unavailable["llm"]
    assert len(calls) == 3 and "gave up after 3 attempts" in verdict.notes["llm:down"]


def test_it_asks_for_as_many_votes_as_fit_its_token_bound():
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=completion({"votes": []}))

    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="small", max_tokens=600)
    judge = LLMJudge(LLMClient(config, transport=httpx.MockTransport(handler)))
    judge.judge(CLAIM, [item(f"e{n}", SUPPORT_TEXT) for n in range(1, 6)])
    assert judge.per_call() == 2  # (600 - 24) // 240 votes fit, not the batch of 6
    schemas = [body["response_format"]["json_schema"]["schema"] for body in seen]
    votes = [schema["properties"]["votes"] for schema in schemas]
    ids = [v["items"]["properties"]["evidence_id"]["enum"] for v in votes]
    assert ids == [["e1", "e2"], ["e3", "e4"], ["e5"]]
    assert [(v["minItems"], v["maxItems"]) for v in votes] == [(2, 2), (2, 2), (1, 1)]
    assert [body["max_tokens"] for body in seen] == [504, 504, 264]
    verdicts = votes[0]["items"]["properties"]["verdict"]["enum"]
    assert verdicts == ["supports", "contradicts", "insufficient", "unverifiable"]
