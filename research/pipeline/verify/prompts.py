"""Prompts of the verification stage (constants, so a change is a visible diff)."""

from __future__ import annotations

from typing import Any

from research.pipeline.verify.records import VoteVerdict

JUDGE_SYSTEM = """You verify one factual claim against numbered evidence passages.
Judge only from the passages; never from your own knowledge, even when you know the
claim to be true. For each passage decide:
- "supports": the passage states the claim (not merely the topic);
- "contradicts": the passage and the claim cannot both be true as stated, about the same
  population, exposure and outcome;
- "insufficient": the passage is relevant but does not establish the claim (related,
  hedged, partial, other setting, association for a causal claim);
- "unverifiable": the claim cannot be checked with this material at all (for example a
  forecast beyond the passage's time horizon).
For "supports" and "contradicts" copy the deciding sentence EXACTLY, character for
character, from that passage into "quote"; a paraphrased quote invalidates the vote.
Give one vote per passage id, and "confidence" as the probability that your verdict is
right.
Reply with JSON only:
{"votes": [{"evidence_id": "<id as given>",
"verdict": "supports|contradicts|insufficient|unverifiable",
"quote": "<exact text>", "confidence": <0..1>, "rationale": "<one sentence>"}]}"""

JUDGE_USER = """Claim: {claim}

Evidence passages:
{passages}"""

JUDGE_PASSAGE = """[{evidence_id}]
{text}
"""

QUOTE_MAX_CHARS = 400  # a deciding sentence; one cut at the cap is still verbatim (a prefix)
RATIONALE_MAX_CHARS = 160

# The fields of one vote as the judge must write them (a ``json_schema`` response format;
# all required, in the order they are generated). ``evidence_id`` gets an enum of the ids
# sent in each call (``llm_judge.judge_schema``).
JUDGE_VOTE_PROPERTIES: dict[str, dict[str, Any]] = {
    "evidence_id": {"type": "string"},
    "verdict": {"type": "string", "enum": [v.value for v in VoteVerdict]},
    "quote": {"type": "string", "maxLength": QUOTE_MAX_CHARS},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "rationale": {"type": "string", "maxLength": RATIONALE_MAX_CHARS},
}

# Tokens one vote may take at most, and the reply's own braces: a call of n passages asks
# for at most JUDGE_REPLY_TOKENS + n * JUDGE_VOTE_TOKENS, and holds fewer passages when
# LLM_MAX_TOKENS is lower than that. Measured: a vote whose quote and rationale are at
# their caps, written as indented JSON, took at most 233 tokens (SmolLM2's tokenizer, 200
# abstracts of the benchmark corpus).
JUDGE_VOTE_TOKENS = 240
JUDGE_REPLY_TOKENS = 24
