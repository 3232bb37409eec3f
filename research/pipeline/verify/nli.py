"""NLI cross-encoder verifier: any sentence-transformers CrossEncoder by name or local path.

``settings.NLI_MODEL`` names it; empty means no NLI verifier, and the verification stage
records ``nli: not configured`` instead of pretending. The model's ``id2label`` must name
entailment, contradiction and neutral labels; a model whose labels cannot be mapped is
refused rather than guessed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from research.pipeline.text import is_meaningful_quote
from research.pipeline.verify.features import item_sentences
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict
from research.providers.base import ProviderError

_lock = threading.Lock()


class NLIUnavailable(ProviderError):
    """No NLI verifier: ``configured`` says whether one was asked for (then it is a
    failure the run must show as "unavailable"), or simply not set."""

    def __init__(self, message: str, *, configured: bool = True) -> None:
        super().__init__(message, permanent=True, provider="nli")
        self.configured = configured


def label_roles(id2label: dict[int, str]) -> dict[str, int]:
    """Map entailment / contradiction / neutral to output indices, or refuse."""
    roles: dict[str, int] = {}
    for index, label in id2label.items():
        name = label.lower()
        for role, stem in (("entail", "entail"), ("contra", "contradict"), ("neutral", "neutral")):
            if name.startswith(role) or stem in name:
                roles[stem] = int(index)
    if set(roles) != {"entail", "contradict", "neutral"}:
        raise NLIUnavailable(f"cannot map NLI labels {sorted(id2label.values())}")
    return roles


@lru_cache(maxsize=2)
def _load(name_or_path: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(name_or_path, device="cpu", local_files_only=True)
    except Exception as exc:  # missing path, hub name offline, corrupt weights
        raise NLIUnavailable(f"NLI model {name_or_path!r} could not be loaded: {exc}") from exc


class NLIVerifier:
    """Premise = each passage sentence, hypothesis = the claim; the best sentence decides."""

    family = "nli"

    def __init__(self, name_or_path: str, *, threshold: float = 0.5, batch_size: int = 16) -> None:
        if not name_or_path:
            raise NLIUnavailable("not configured (settings.NLI_MODEL is empty)", configured=False)
        self.model = _load(name_or_path)
        self.roles = label_roles(dict(self.model.config.id2label))
        self.threshold = threshold
        self.batch_size = batch_size
        self.name = f"nli:{os.path.basename(name_or_path.rstrip('/')) or name_or_path}"

    @classmethod
    def from_settings(cls) -> NLIVerifier:
        from django.conf import settings

        return cls(settings.NLI_MODEL)

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        return [self._judge_one(claim, item) for item in items]

    def _judge_one(self, claim: ClaimInput, item: EvidenceItem) -> Vote:
        sentences = [item.text[a:b] for a, b in item_sentences(item)]
        sentences = [s for s in sentences if is_meaningful_quote(s)] or [item.text]
        with _lock:
            probs = np.asarray(
                self.model.predict(
                    [(s, claim.text) for s in sentences],
                    apply_softmax=True,
                    batch_size=self.batch_size,
                    show_progress_bar=False,
                )
            ).reshape(len(sentences), -1)
        ent, con = probs[:, self.roles["entail"]], probs[:, self.roles["contradict"]]
        i_e, i_c = int(ent.argmax()), int(con.argmax())
        if con[i_c] >= self.threshold and con[i_c] > ent[i_e]:
            verdict, score, index = VoteVerdict.CONTRADICTS, float(con[i_c]), i_c
        elif ent[i_e] >= self.threshold:
            verdict, score, index = VoteVerdict.SUPPORTS, float(ent[i_e]), i_e
        else:
            neutral = probs[:, self.roles["neutral"]]
            verdict, score, index = VoteVerdict.INSUFFICIENT, float(neutral.max()), i_e
        return Vote.bind(
            self.name,
            self.family,
            claim,
            item,
            verdict=verdict,
            score=score,
            quote=sentences[index],
            rationale=(
                f"best entailment {float(ent[i_e]):.2f}, best contradiction "
                f"{float(con[i_c]):.2f} over {len(sentences)} sentence(s)"
            ),
        )
