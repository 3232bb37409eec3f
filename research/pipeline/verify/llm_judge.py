"""LLM judge over an OpenAI-compatible endpoint, forced to quote its evidence verbatim.

The judge returns free JSON; this module only turns it into :class:`Vote` records bound
to the fingerprints of the texts that were sent. It does not trust anything in the
reply: admission discards votes with invented ids, paraphrased or one-word quotes,
duplicates, and out-of-range confidences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from research.pipeline.verify.prompts import JUDGE_PASSAGE, JUDGE_SYSTEM, JUDGE_USER
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote
from research.providers.llm import LLMClient, LLMError

MAX_PASSAGE_CHARS = 2400


class LLMJudge:
    family = "llm"

    def __init__(self, client: LLMClient, *, batch: int = 6) -> None:
        self.client = client
        self.batch = batch
        self.name = f"llm:{client.config.model}"

    @classmethod
    def from_settings(cls) -> LLMJudge | None:
        client = LLMClient.from_settings()
        return cls(client) if client is not None else None

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        votes: list[Vote] = []
        for start in range(0, len(items), self.batch):
            chunk = items[start : start + self.batch]
            votes.extend(self._votes(claim, chunk, self._ask(claim, chunk)))
        return votes

    def _ask(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> Any:
        passages = "\n".join(
            JUDGE_PASSAGE.format(evidence_id=i.evidence_id, text=i.text[:MAX_PASSAGE_CHARS])
            for i in items
        )
        return self.client.chat_json(
            [
                {"role": "system", "content": JUDGE_SYSTEM},
                {"role": "user", "content": JUDGE_USER.format(claim=claim.text, passages=passages)},
            ]
        )

    def _votes(self, claim: ClaimInput, items: Sequence[EvidenceItem], reply: Any) -> list[Vote]:
        rows = reply.get("votes") if isinstance(reply, dict) else None
        if not isinstance(rows, list):
            raise LLMError("reply has no 'votes' list", permanent=True, provider="llm")
        sent = {i.evidence_id: i.fingerprint for i in items}
        votes = []
        for row in rows:
            if not isinstance(row, dict):
                continue
            evidence_id = str(row.get("evidence_id", ""))
            votes.append(
                Vote(
                    verifier=self.name,
                    family=self.family,
                    claim_id=claim.claim_id,
                    evidence_id=evidence_id,
                    verdict=str(row.get("verdict", "")).strip().lower(),
                    score=_number(row.get("confidence", 0.6)),
                    claim_fingerprint=claim.fingerprint,
                    evidence_fingerprint=sent.get(evidence_id, ""),
                    quote=str(row.get("quote") or ""),
                    rationale=str(row.get("rationale") or "")[:1000],
                )
            )
        return votes


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return -1.0  # admission discards it as out of range
