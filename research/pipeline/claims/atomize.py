"""LLM atomizer: an OpenAI-compatible model proposes atomic findings, code binds their quotes.

Every proposed claim must name a quote that occurs in the passage (verbatim; runs of
whitespace may differ, the anchor is the passage's own text), long enough to mean
something, that reports a finding (its sentence role, :mod:`roles`), and whose words carry
the claim's (a claim that says more than its quote is not anchored). Anything else is
dropped with the reason. The request asks for JSON that follows a schema (at most two
claims a sentence and ten a passage, each field bounded; ``json_schema`` where the server
takes it, see ``research.providers.llm``). When the endpoint fails for a passage (timeout,
HTTP error, a reply cut off at the token bound, invalid JSON, no claim list), the
rule-based candidates are used for that passage and the run record says so. What the
model proposes then goes through the same scoring, scope, merging and budget as
rule-based candidates (:func:`select.mine_run`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from research.pipeline.claims.mine import Proposal, _anchor, candidates
from research.pipeline.claims.prompts import ATOMIZE_SYSTEM, ATOMIZE_USER
from research.pipeline.claims.records import (
    DroppedCandidate,
    MineConfig,
    MiningResult,
    PassageInput,
    RunInput,
    SubquestionInput,
)
from research.pipeline.claims.roles import classify_sentence
from research.pipeline.claims.select import mine_run
from research.pipeline.language.lexicon import content_stems, content_words, is_meaningful_quote
from research.pipeline.language.sentences import split_sentences
from research.providers.llm import JsonSchema, LLMClient, LLMError

# The claim types (the values of ledger.models.ClaimType, which the pipeline, a layer below
# the models, does not import): the atomizer's schema offers these, any other is dropped.
TYPES = (
    "historical",
    "definitional",
    "mechanistic",
    "empirical",
    "comparative",
    "current-state",
    "causal",
    "numerical",
    "temporal",
    "recommendation",
)
MIN_QUOTE_COVERAGE = 0.6  # share of the claim's content words its quote must contain
MAX_CLAIMS = 10  # atomic claims one passage may yield
CLAIMS_PER_SENTENCE = 2  # a compound sentence splits into a few propositions, not more
# One proposed claim as the atomizer must write it (a ``json_schema`` response format where
# the server takes it); each field bounded, so that a reply fits LLM_MAX_TOKENS.
CLAIM_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": 300},
        "quote": {"type": "string", "maxLength": 500},
        "type": {"type": "string", "enum": sorted(TYPES)},
    },
    "required": ["text", "quote", "type"],
    "additionalProperties": False,
}


def atomize_schema(passage: str) -> JsonSchema:
    """The reply for ``passage``: a list of claims, at most two per sentence (and 10)."""
    room = min(MAX_CLAIMS, CLAIMS_PER_SENTENCE * max(1, len(split_sentences(passage))))
    claims = {"type": "array", "items": CLAIM_SCHEMA, "maxItems": room}
    return JsonSchema.one_field("atomic_claims", "claims", claims)


def find_quote(passage: str, quote: str) -> tuple[int, int] | None:
    """Where the quote is in the passage, allowing runs of whitespace to differ."""
    start = passage.find(quote)
    if start >= 0:
        return start, start + len(quote)
    parts = quote.split()
    if not parts:
        return None
    match = re.search(r"\s+".join(re.escape(p) for p in parts), passage)
    return (match.start(), match.end()) if match else None


def atomize_passage(
    client: LLMClient, passage: PassageInput, cfg: MineConfig
) -> tuple[list[Proposal], list[DroppedCandidate]]:
    reply = client.chat_json(
        [
            {"role": "system", "content": ATOMIZE_SYSTEM},
            {"role": "user", "content": ATOMIZE_USER.format(text=passage.text)},
        ],
        schema=atomize_schema(passage.text),
    )
    rows = reply.get("claims") if isinstance(reply, dict) else None
    if not isinstance(rows, list):
        raise LLMError("reply has no 'claims' list", permanent=True, provider="llm")
    proposals: list[Proposal] = []
    dropped: list[DroppedCandidate] = []
    origin = f"llm:{client.config.model}"
    for row in rows:
        text, quote = _field(row, "text"), _field(row, "quote")
        span = find_quote(passage.text, quote) if quote else None
        anchor = _anchor(passage, *span) if span else _anchor(passage, 0, 0)
        reason = _unanchored(text, anchor.quote, span, cfg)
        if reason:
            dropped.append(DroppedCandidate(text or "(empty)", f"llm atomizer: {reason}", anchor))
            continue
        role = classify_sentence(anchor.quote, passage.label)
        if not role.is_finding:
            why = f"llm atomizer: its quote {role.drop_reason}"
            dropped.append(DroppedCandidate(text, why, anchor, role=role.role))
            continue
        if not _carried(text, anchor.quote):
            why = (
                "llm atomizer: the claim says more than its quote (most of its words are not in it)"
            )
            dropped.append(DroppedCandidate(text, why, anchor, role=role.role))
            continue
        kind = _field(row, "type")
        proposals.append(Proposal(text, anchor, role.role, origin, kind if kind in TYPES else ""))
    return proposals, dropped


def _unanchored(text: str, quote: str, span: tuple[int, int] | None, cfg: MineConfig) -> str:
    if span is None:
        return "quote not verbatim in the passage"
    if not is_meaningful_quote(quote):
        return "quote too short"
    if len(content_words(text)) < cfg.min_content_words:
        return "too short to state a fact"
    return ""


def _carried(text: str, quote: str) -> bool:
    """Most of the claim's content words are in its quote."""
    claim = content_stems(text)
    return not claim or len(claim & content_stems(quote)) / len(claim) >= MIN_QUOTE_COVERAGE


def _field(row: Any, key: str) -> str:
    return str(row.get(key) or "").strip() if isinstance(row, dict) else ""


def llm_proposals(client: LLMClient) -> Any:
    """A proposer for :func:`select.mine_run`: the model per passage, rules where it fails."""

    def propose(
        passages: Sequence[PassageInput], cfg: MineConfig
    ) -> tuple[list[Proposal], list[DroppedCandidate], dict[str, str]]:
        proposals: list[Proposal] = []
        dropped: list[DroppedCandidate] = []
        notes: dict[str, str] = {}
        for passage in passages:
            try:
                got, lost = atomize_passage(client, passage, cfg)
            except LLMError as exc:
                notes[f"atomizer:{passage.passage_id}"] = f"LLM failed ({exc}); rules used instead"
                got, lost = candidates([passage], cfg)
            proposals += got
            dropped += lost
        return proposals, dropped, notes

    return propose


def mine_claims_llm(
    passages: Sequence[PassageInput], client: LLMClient, cfg: MineConfig | None = None
) -> MiningResult:
    """Like :func:`mine.mine_claims`, with the LLM proposing the atomic claims."""
    cfg = cfg or MineConfig()
    question = cfg.question or cfg.focus
    sq = SubquestionInput(key="", text=cfg.focus or question, passages=tuple(passages))
    mining = mine_run(
        RunInput(question=question, subquestions=(sq,)), cfg, propose=llm_proposals(client)
    )
    result = mining.results[""]
    result.notes.update(mining.notes)
    return result
