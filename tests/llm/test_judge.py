"""The LLM judge against a real llama.cpp server: plumbing only, never whether it is right."""

from __future__ import annotations

import json

import pytest

from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.coverage import CoverageVerifier
from research.pipeline.verify.llm_judge import LLMJudge
from research.pipeline.verify.prompts import (
    JUDGE_REPLY_TOKENS,
    JUDGE_VOTE_TOKENS,
    QUOTE_MAX_CHARS,
    RATIONALE_MAX_CHARS,
)
from research.pipeline.verify.records import ClaimInput, VoteVerdict
from tests.verify.helpers import SUPPORT_TEXT, item

pytestmark = pytest.mark.slow

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")
SETTING = "The trial enrolled 120 adults at two hospitals in Boston."


def test_it_gets_one_schema_vote_per_passage_within_the_token_bound(smol):
    client = smol(600)
    votes = LLMJudge(client).judge(CLAIM, [item("e1", SUPPORT_TEXT), item("e2", SETTING)])
    sent = client.last
    assert sent is not None and sent.response_format == "json_schema"
    assert client.refused == set()  # llama.cpp takes json_schema
    assert sent.max_tokens == JUDGE_REPLY_TOKENS + 2 * JUDGE_VOTE_TOKENS <= 600
    assert sent.completion_tokens is not None and sent.completion_tokens <= sent.max_tokens
    rows = json.loads(sent.text)["votes"]
    assert sorted(row["evidence_id"] for row in rows) in (["e1", "e2"], ["e1", "e1"], ["e2", "e2"])
    assert all(row["verdict"] in set(VoteVerdict) for row in rows)
    assert all(len(row["quote"]) <= QUOTE_MAX_CHARS for row in rows)
    assert all(len(row["rationale"]) <= RATIONALE_MAX_CHARS for row in rows)
    assert all(0 <= row["confidence"] <= 1 for row in rows)
    assert votes and {v.evidence_id for v in votes} <= {"e1", "e2"}
    assert all(v.verdict in set(VoteVerdict) for v in votes)


def test_it_reports_a_reply_cut_off_at_the_bound_and_keeps_the_other_votes(smol):
    client = smol(32)
    judge = LLMJudge(client)
    assert judge.per_call() == 1  # no room for more votes than one
    config = VerifyConfig(verifiers=(CoverageVerifier(), judge))
    verdict = verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], config)
    sent = client.last
    assert sent is not None and sent.finish_reason == "length"
    assert sent.completion_tokens is not None and sent.completion_tokens <= 32
    assert "reply cut off at max_tokens=32" in verdict.notes[judge.name]
    assert "cut off" in verdict.unavailable["llm"]  # the family failed: never counted
    assert [v.family for v in verdict.votes] == ["coverage"]  # the other family's vote stays
