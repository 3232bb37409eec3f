"""The LLM atomizer against a real llama.cpp server: plumbing only, never claim quality."""

from __future__ import annotations

import json

import pytest

from research.pipeline.claims import MineConfig, PassageInput, mine_claims, mine_claims_llm
from research.pipeline.claims.atomize import TYPES, atomize_passage
from research.pipeline.text import passage_fingerprint

pytestmark = pytest.mark.slow

FINDING = "In 500 older women, vitamin D reduced falls by 20 percent."


def passage(text: str) -> PassageInput:
    return PassageInput("p1", text, passage_fingerprint(text), source_key="doc:p1")


def test_it_parses_the_schema_reply_and_anchors_every_kept_claim(smol):
    client = smol(160)
    kept, dropped = atomize_passage(client, passage(FINDING), MineConfig())
    sent = client.last
    assert sent is not None and sent.response_format == "json_schema"
    assert sent.finish_reason == "stop" and sent.max_tokens == 160
    assert sent.completion_tokens is not None and sent.completion_tokens <= 160
    rows = json.loads(sent.text)["claims"]
    assert len(rows) <= 2  # one sentence: at most two claims
    assert all(set(row) == {"text", "quote", "type"} and row["type"] in TYPES for row in rows)
    assert len(kept) + len(dropped) == len(rows)  # every proposal kept or dropped with a reason
    assert all(FINDING[p.anchor.start : p.anchor.end] == p.anchor.quote for p in kept)
    assert all(d.reason.startswith("llm atomizer: ") for d in dropped)


def test_it_mines_the_passage_with_the_rules_when_the_reply_is_cut_off(smol):
    client = smol(24)
    result = mine_claims_llm([passage(FINDING)], client)
    sent = client.last
    assert sent is not None and sent.finish_reason == "length"
    assert sent.completion_tokens is not None and sent.completion_tokens <= 24
    note = result.notes["atomizer:p1"]
    assert "reply cut off at max_tokens=24" in note and "rules used instead" in note
    rules = mine_claims([passage(FINDING)]).claims
    assert rules and [c.text for c in result.claims] == [c.text for c in rules]
