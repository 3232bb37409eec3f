"""LLM atomizer: an OpenAI-compatible model proposes atomic claims, code binds their quotes.

Every proposed claim must name a quote that occurs verbatim in the passage and is long
enough to mean something; otherwise it is dropped with the reason. When the endpoint
fails, the deterministic miner's claims are used for that passage and the note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from research.pipeline.claims.classify import describe
from research.pipeline.claims.mine import _anchor, _score, merge
from research.pipeline.claims.mine import candidates as rule_candidates
from research.pipeline.claims.records import (
    ClaimDraft,
    DroppedCandidate,
    MineConfig,
    MiningResult,
    PassageInput,
)
from research.pipeline.text import (
    claim_fingerprint,
    content_stems,
    content_words,
    is_meaningful_quote,
)
from research.pipeline.verify.prompts import ATOMIZE_SYSTEM, ATOMIZE_USER
from research.providers.llm import LLMClient, LLMError

TYPES = frozenset(
    [
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
    ]
)


def atomize_passage(
    client: LLMClient, passage: PassageInput, rank: int, cfg: MineConfig
) -> tuple[list[ClaimDraft], list[DroppedCandidate]]:
    reply = client.chat_json(
        [
            {"role": "system", "content": ATOMIZE_SYSTEM},
            {"role": "user", "content": ATOMIZE_USER.format(text=passage.text)},
        ]
    )
    rows = reply.get("claims") if isinstance(reply, dict) else None
    if not isinstance(rows, list):
        raise LLMError("reply has no 'claims' list", permanent=True, provider="llm")
    drafts: list[ClaimDraft] = []
    dropped: list[DroppedCandidate] = []
    focus = content_stems(cfg.focus)
    origin = f"llm:{client.config.model}"
    for row in rows:
        text, quote = _field(row, "text"), _field(row, "quote")
        start = passage.text.find(quote) if quote else -1
        if start < 0 or not is_meaningful_quote(quote):
            anchor = _anchor(passage, 0, 0)
            reason = "quote not verbatim in the passage" if start < 0 else "quote too short"
            dropped.append(DroppedCandidate(text or "(empty)", f"llm atomizer: {reason}", anchor))
            continue
        anchor = _anchor(passage, start, start + len(quote))
        if len(content_words(text)) < cfg.min_content_words:
            dropped.append(DroppedCandidate(text, "too short to state a fact", anchor))
            continue
        info = describe(text)
        kind = _field(row, "type")
        drafts.append(
            ClaimDraft(
                text=text,
                fingerprint=claim_fingerprint(text),
                claim_type=kind if kind in TYPES else str(info["claim_type"]),
                anchors=[anchor],
                entities=list(info["entities"]),  # type: ignore[call-overload]
                numbers=list(info["numbers"]),  # type: ignore[call-overload]
                hedges=list(info["hedges"]),  # type: ignore[call-overload]
                time_sensitivity=str(info["time_sensitivity"]),
                origin=origin,
                score=_score(text, passage, rank, focus),
            )
        )
    return drafts, dropped


def _field(row: Any, key: str) -> str:
    return str(row.get(key) or "").strip() if isinstance(row, dict) else ""


def mine_claims_llm(
    passages: Sequence[PassageInput], client: LLMClient, cfg: MineConfig | None = None
) -> MiningResult:
    """Like :func:`mine.mine_claims`, with the LLM proposing the atomic claims."""
    cfg = cfg or MineConfig()
    drafts: list[ClaimDraft] = []
    dropped: list[DroppedCandidate] = []
    notes: dict[str, str] = {}
    for rank, passage in enumerate(passages):
        try:
            got, lost = atomize_passage(client, passage, rank, cfg)
        except LLMError as exc:
            notes[f"atomizer:{passage.passage_id}"] = f"LLM failed ({exc}); rules used instead"
            got, lost = rule_candidates([passage], cfg)
        drafts += got
        dropped += lost
    merged = merge(drafts, cfg.merge_jaccard)
    merged.sort(key=lambda d: (-d.score, d.fingerprint))
    for draft in merged[cfg.max_claims :]:
        reason = f"over the claim budget of {cfg.max_claims} for this subquestion"
        dropped.append(DroppedCandidate(draft.text, reason, draft.anchors[0], draft.claim_type))
    return MiningResult(merged[: cfg.max_claims], dropped, notes)
