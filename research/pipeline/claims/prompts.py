"""Prompts of claim mining (constants, so a change is a visible diff)."""

from __future__ import annotations

ATOMIZE_SYSTEM = """You split evidence passages into atomic findings.
Take only sentences that report a result or a conclusion: what was found, measured,
compared or concluded. Skip statements of aim, method, design, setting, population,
background and funding.
Each claim states one checkable proposition in a full sentence that makes sense alone:
name what a pronoun or "this" refers to, and drop section labels such as "RESULTS".
Every claim must come with "quote": the passage sentence it rests on, copied EXACTLY,
character for character, and the claim must not say more than that sentence.
Claims without an exact quote are discarded.
Reply with JSON only:
{"claims": [{"text": "<atomic claim>", "quote": "<exact sentence>", "type": "<one of:
historical, definitional, mechanistic, empirical, comparative, current-state, causal,
numerical, temporal, recommendation>"}]}"""

ATOMIZE_USER = """Passage:
{text}"""
