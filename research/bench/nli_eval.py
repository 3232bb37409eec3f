"""Claim-level SciFact figures of a cross-encoder, from its window probabilities.

The verifier reads a passage as windows: each sentence, and each two adjacent sentences
(a rationale often spans two). A claim's label on one abstract comes from the window the
model finds most entailing and the one it finds most contradicting (``decide``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from research.bench.nli_training import CONTRADICTION, ENTAILMENT
from research.bench.scifact import CLASSES, SciFactClaim, SciFactDoc


def windows(sentences: Sequence[str]) -> list[str]:
    out = list(sentences)
    out += [f"{a} {b}" for a, b in zip(sentences, sentences[1:], strict=False)]
    return out


@dataclass
class ClaimScores:
    claim: SciFactClaim
    per_doc: list[np.ndarray]  # one (windows, 3) array per cited abstract


def score_claims(
    claims: Sequence[SciFactClaim],
    docs: dict[int, SciFactDoc],
    probs: Callable[[list[tuple[str, str]]], np.ndarray],
) -> list[ClaimScores]:
    pairs: list[tuple[str, str]] = []
    index: list[tuple[int, int, int]] = []  # claim, doc slot, count
    for ci, claim in enumerate(claims):
        for slot, doc_id in enumerate(d for d in claim.cited_doc_ids if d in docs):
            texts = windows(docs[doc_id].sentences)
            index.append((ci, slot, len(texts)))
            pairs.extend((t, claim.text) for t in texts)
    out = [ClaimScores(c, []) for c in claims]
    all_probs = probs(pairs) if pairs else np.zeros((0, 3), np.float32)
    cursor = 0
    for ci, _slot, n in index:
        out[ci].per_doc.append(all_probs[cursor : cursor + n])
        cursor += n
    return out


def decide(scores: ClaimScores, support_at: float = 0.5, contradict_at: float = 0.5) -> str:
    """SUPPORT / CONTRADICT / NEI: a window whose most likely label is entailment (or
    contradiction) at or above the threshold; contradiction wins a tie of both."""
    best_e, best_c = 0.0, 0.0
    for arr in scores.per_doc:
        if not len(arr):
            continue
        top = arr.argmax(1)
        ent = np.where(top == ENTAILMENT, arr[:, ENTAILMENT], 0.0)
        con = np.where(top == CONTRADICTION, arr[:, CONTRADICTION], 0.0)
        best_e, best_c = max(best_e, float(ent.max())), max(best_c, float(con.max()))
    if best_c >= contradict_at and best_c >= best_e:
        return "CONTRADICT"
    if best_e >= support_at:
        return "SUPPORT"
    return "NEI"


def figures(scores: Sequence[ClaimScores], **thresholds: float) -> dict[str, float]:
    from research.bench.verifier_training import metrics

    gold = np.asarray([CLASSES.index(s.claim.label) for s in scores])
    pred = np.asarray([CLASSES.index(decide(s, **thresholds)) for s in scores])
    out = metrics(gold, pred)
    support = CLASSES.index("SUPPORT")
    out["support_recall"] = float((pred[gold == support] == support).mean())
    return {k: round(float(v), 4) for k, v in out.items()}
