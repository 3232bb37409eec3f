"""LLM judges over OpenAI-compatible endpoints, forced to quote their evidence verbatim.

Each judge is its own verifier family (``settings.LLM_JUDGES``: family, base URL, model;
or the single ``LLM_BASE_URL`` endpoint as family ``llm``), so two judges that agree
count as two families towards the quorum, and one that disagrees blocks PASS.

The judge sees every passage whole: a passage longer than ``max_chars`` is split at
sentence boundaries into parts sent as ``<id>~<k>`` (never cut off), and the parts'
votes are reduced to one vote per passage (contradicts over supports over
insufficient over unverifiable; the quote must lie in the part it came from).

The judge is asked for JSON that follows a schema (one vote per id sent, a verdict among
the four labels, a bounded quote; ``json_schema`` where the server takes it, see
``research.providers.llm``) and for at most as many tokens as that many votes need. This
module only turns the reply into :class:`Vote` records bound to the fingerprints of the
texts that were sent. It does not trust anything in the reply, schema or not: admission
discards votes with invented ids, paraphrased or one-word quotes, duplicates, and
out-of-range confidences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from research.pipeline.language.sentences import split_sentences
from research.pipeline.verify.prompts import (
    JUDGE_PASSAGE,
    JUDGE_REPLY_TOKENS,
    JUDGE_SYSTEM,
    JUDGE_USER,
    JUDGE_VOTE_PROPERTIES,
    JUDGE_VOTE_TOKENS,
)
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict
from research.providers.llm import JsonSchema, LLMClient, LLMError

MAX_PASSAGE_CHARS = 2400
RANK = {
    VoteVerdict.CONTRADICTS.value: 3,
    VoteVerdict.SUPPORTS.value: 2,
    VoteVerdict.INSUFFICIENT.value: 1,
    VoteVerdict.UNVERIFIABLE.value: 0,
}


@dataclass(frozen=True)
class Part:
    """A passage, or one sentence-aligned part of a long one, as the judge sees it."""

    label: str  # the id the judge is shown
    item: EvidenceItem
    text: str


def split_passage(item: EvidenceItem, max_chars: int = MAX_PASSAGE_CHARS) -> list[Part]:
    """The whole passage, or sentence-aligned parts of at most ``max_chars`` each.

    A single sentence longer than ``max_chars`` is its own part, whole: nothing is cut.
    """
    if len(item.text) <= max_chars:
        return [Part(item.evidence_id, item, item.text)]
    spans = split_sentences(item.text) or [(0, len(item.text))]
    groups: list[tuple[int, int]] = []
    start, end = spans[0]
    for a, b in spans[1:]:
        if b - start > max_chars:
            groups.append((start, end))
            start = a
        end = b
    groups.append((start, end))
    return [
        Part(f"{item.evidence_id}~{k}", item, item.text[a:b])
        for k, (a, b) in enumerate(groups, start=1)
    ]


class LLMJudge:
    def __init__(
        self,
        client: LLMClient,
        *,
        family: str = "llm",
        batch: int = 6,
        max_chars: int = MAX_PASSAGE_CHARS,
    ) -> None:
        self.client = client
        self.family = family
        self.batch = batch
        self.max_chars = max_chars
        self.name = f"{family}:{client.config.model}"[:60]

    @classmethod
    def from_settings(cls) -> list[LLMJudge]:
        """One judge per ``LLM_JUDGES`` entry, else the single endpoint, else none."""
        from django.conf import settings

        judges = list(settings.LLM_JUDGES)
        if not judges:
            client = LLMClient.from_settings()
            return [cls(client)] if client is not None else []
        return [
            cls(LLMClient.for_endpoint(url, model), family=family) for family, url, model in judges
        ]

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        parts = [part for item in items for part in split_passage(item, self.max_chars)]
        rows: list[tuple[Part, dict[str, Any]]] = []
        batch = self.per_call()
        for start in range(0, len(parts), batch):
            chunk = parts[start : start + batch]
            rows.extend(self._rows(chunk, self._ask(claim, chunk)))
        return self._votes(claim, items, rows)

    def per_call(self) -> int:
        """Passages per call: ``batch``, fewer when their votes would not fit the token bound."""
        room = (self.client.config.max_tokens - JUDGE_REPLY_TOKENS) // JUDGE_VOTE_TOKENS
        return max(1, min(self.batch, room))

    def _ask(self, claim: ClaimInput, parts: Sequence[Part]) -> Any:
        passages = "\n".join(JUDGE_PASSAGE.format(evidence_id=p.label, text=p.text) for p in parts)
        return self.client.chat_json(
            [
                {"role": "system", "content": JUDGE_SYSTEM},
                {"role": "user", "content": JUDGE_USER.format(claim=claim.text, passages=passages)},
            ],
            schema=judge_schema([p.label for p in parts]),
            max_tokens=JUDGE_REPLY_TOKENS + JUDGE_VOTE_TOKENS * len(parts),
        )

    def _rows(self, parts: Sequence[Part], reply: Any) -> list[tuple[Part, dict[str, Any]]]:
        rows = reply.get("votes") if isinstance(reply, dict) else None
        if not isinstance(rows, list):
            raise LLMError("reply has no 'votes' list", permanent=True, provider=self.family)
        by_label = {p.label: p for p in parts}
        out: list[tuple[Part, dict[str, Any]]] = []
        for row in rows:
            if not isinstance(row, dict):
                continue
            label = str(row.get("evidence_id", ""))
            part = by_label.get(label)
            if part is None:  # an invented id: kept so that admission discards it visibly
                part = Part(label, EvidenceItem(label, "", ""), "")
            out.append((part, row))
        return out

    def _votes(
        self,
        claim: ClaimInput,
        items: Sequence[EvidenceItem],
        rows: list[tuple[Part, dict[str, Any]]],
    ) -> list[Vote]:
        """One vote per passage (parts reduced), plus every row naming an unknown id."""
        known = {i.evidence_id for i in items}
        best: dict[str, tuple[int, float, Vote]] = {}
        strays: list[Vote] = []
        for part, row in rows:
            vote = self._vote(claim, part, row)
            if part.item.evidence_id not in known:
                strays.append(vote)
                continue
            key = (RANK.get(vote.verdict, -1), vote.score, vote)
            held = best.get(vote.evidence_id)
            if held is None or key[:2] > held[:2]:
                best[vote.evidence_id] = key
        return [best[i.evidence_id][2] for i in items if i.evidence_id in best] + strays

    def _vote(self, claim: ClaimInput, part: Part, row: dict[str, Any]) -> Vote:
        return Vote(
            verifier=self.name,
            family=self.family,
            claim_id=claim.claim_id,
            evidence_id=part.item.evidence_id,
            verdict=str(row.get("verdict", "")).strip().lower(),
            score=_number(row.get("confidence", 0.6)),
            claim_fingerprint=claim.fingerprint,
            evidence_fingerprint=part.item.fingerprint,
            quote=str(row.get("quote") or ""),
            rationale=str(row.get("rationale") or "")[:1000],
        )


def judge_schema(labels: list[str]) -> JsonSchema:
    """The reply of one call: one vote per id in ``labels``, each id one of them."""
    vote = {
        "type": "object",
        "properties": {**JUDGE_VOTE_PROPERTIES, "evidence_id": {"type": "string", "enum": labels}},
        "required": list(JUDGE_VOTE_PROPERTIES),
        "additionalProperties": False,
    }
    votes = {"type": "array", "items": vote, "minItems": len(labels), "maxItems": len(labels)}
    return JsonSchema.one_field("judge_votes", "votes", votes)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return -1.0  # admission discards it as out of range
