"""Prompts of the verification stage (constants, so a change is a visible diff)."""

from __future__ import annotations

JUDGE_SYSTEM = """You verify one factual claim against numbered evidence passages.
Judge only from the passages; never from your own knowledge. For each passage decide:
- "supports": the passage states the claim (not merely the topic);
- "contradicts": the passage and the claim cannot both be true as stated;
- "insufficient": anything else (related, hedged, partial, other setting).
For "supports" and "contradicts" copy the deciding sentence EXACTLY, character for
character, from that passage into "quote"; a paraphrased quote invalidates the vote.
Reply with JSON only:
{"votes": [{"evidence_id": "<id as given>", "verdict": "supports|contradicts|insufficient",
"quote": "<exact text>", "confidence": <0..1>, "rationale": "<one sentence>"}]}"""

JUDGE_USER = """Claim: {claim}

Evidence passages:
{passages}"""

JUDGE_PASSAGE = """[{evidence_id}]
{text}
"""

ATOMIZE_SYSTEM = """You split evidence passages into atomic factual claims.
Each claim states one checkable proposition in a full sentence that makes sense alone.
Every claim must come with "quote": the passage sentence it rests on, copied EXACTLY,
character for character. Claims without an exact quote are discarded.
Reply with JSON only:
{"claims": [{"text": "<atomic claim>", "quote": "<exact sentence>", "type": "<one of:
historical, definitional, mechanistic, empirical, comparative, current-state, causal,
numerical, temporal, recommendation>"}]}"""

ATOMIZE_USER = """Passage:
{text}"""
