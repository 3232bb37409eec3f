"""Features of a claim–passage pair for the learned verifier (frozen MiniLM + lexical).

Only *pair* features: nothing here looks at the claim alone, so a model trained on them
cannot learn a claim-only artifact of its training data (negated rewrites give their label away by
their own wording). The claim's negation appears only as a mismatch with the evidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from research.pipeline.language.direction import NULL_EFFECT, antonym_clash, direction, negated
from research.pipeline.language.lexicon import content_stems, hedges, is_meaningful_quote
from research.pipeline.language.quantities import quantities
from research.pipeline.language.sentences import clause_spans, split_sentences
from research.pipeline.verify.records import EvidenceItem

if TYPE_CHECKING:
    from numpy.typing import NDArray

FEATURE_NAMES: tuple[str, ...] = (
    "cos_max",
    "cos_second",
    "cos_mean",
    "cos_gap",
    "cov_best",
    "cov_max",
    "cov_passage",
    "prec_best",
    "neg_mismatch",
    "neg_mismatch_x_cov",
    "null_effect_best",
    "null_effect_x_directional_claim",
    "polarity_agree",
    "polarity_disagree",
    "polarity_disagree_x_cov",
    "antonym_clash",
    "neg_mismatch_top3",
    "num_match",
    "num_conflict",
    "hedged_best",
    "best_is_first",
    "log_sentences",
)


def item_sentences(item: EvidenceItem) -> list[tuple[int, int]]:
    """Clause spans of the item's sentences (given, else split), never empty.

    "X increases Y, but whether Z is unknown" is judged as two clauses: an atomic claim
    mined from the first must not be contradicted by the negation in the second.
    """
    spans = list(item.sentences) or split_sentences(item.text)
    clauses = [c for a, b in spans if b > a for c in clause_spans(item.text, a, b)]
    return [(a, b) for a, b in clauses if item.text[a:b].strip()] or [(0, len(item.text))]


def polarity(text: str) -> int:
    """Direction of the stated effect, flipped by negation ("does not increase" = -1)."""
    d = direction(text)
    return -d if negated(text) else d


@dataclass(frozen=True)
class PairFeatures:
    values: NDArray[np.float64]
    best: int  # index into the item's sentence spans of the sentence to quote


class _Claim:
    """What is computed once per claim and reused for every sentence."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stems = content_stems(text)
        self.negated = negated(text)
        self.polarity = polarity(text)
        self.directional = direction(text) != 0 and not self.negated
        self.quantities = quantities(text)


def _cov(claim_stems: set[str], stems: set[str]) -> float:
    return 1.0 if not claim_stems else len(claim_stems & stems) / len(claim_stems)


def pair_features(
    claim_text: str, sentences: list[str], u: NDArray[np.float32], v: NDArray[np.float32]
) -> PairFeatures:
    """Features of a claim against a passage given as sentences with their embeddings."""
    c = _Claim(claim_text)
    cos = v @ u if len(sentences) else np.zeros(1, dtype=np.float32)
    stems = [content_stems(s) for s in sentences]
    covs = np.array([_cov(c.stems, s) for s in stems]) if stems else np.zeros(1)
    quotable = np.array([is_meaningful_quote(s) for s in sentences] or [False])
    rank = cos + 0.25 * covs + np.where(quotable, 0.0, -1.0)
    best = int(np.argmax(rank))
    top3 = list(np.argsort(-rank)[:3])
    sent = sentences[best] if sentences else ""
    order = np.sort(cos)[::-1]
    all_stems: set[str] = set().union(*stems) if stems else set()
    neg_mm = float(c.negated != negated(sent))
    pol = c.polarity * polarity(sent)
    null_best = float(bool(NULL_EFFECT.search(sent)))
    passage = " ".join(sentences)
    num_match, num_conflict = _numbers(c, passage)
    values = [
        float(order[0]),
        float(order[1]) if len(order) > 1 else float(order[0]),
        float(cos.mean()),
        float(order[0] - cos.mean()),
        float(covs[best]),
        float(covs.max()),
        _cov(c.stems, all_stems),
        len(stems[best] & c.stems) / max(1, len(stems[best])) if stems else 0.0,
        neg_mm,
        neg_mm * float(covs[best]),
        null_best,
        null_best * float(c.directional),
        float(pol > 0),
        float(pol < 0),
        float(pol < 0) * float(covs[best]),
        float(bool(antonym_clash(claim_text, sent))),
        max((float(c.negated != negated(sentences[i])) * float(covs[i]) for i in top3), default=0),
        num_match,
        num_conflict,
        float(bool(hedges(sent))),
        float(best == 0),
        math.log1p(len(sentences)),
    ]
    return PairFeatures(np.asarray(values, dtype=np.float64), best)


def _numbers(c: _Claim, passage: str) -> tuple[float, float]:
    """(share of the claim's quantities found with value and unit, any unit-clash)."""
    if not c.quantities:
        return 0.0, 0.0
    found = quantities(passage)
    exact = {(q.value, q.unit) for q in found}
    by_unit: dict[str, set[float]] = {}
    for q in found:
        by_unit.setdefault(q.unit, set()).add(q.value)
    matched = sum(1 for q in c.quantities if (q.value, q.unit) in exact)
    clash = any(
        q.unit and q.unit in by_unit and q.value not in by_unit[q.unit] for q in c.quantities
    )
    return matched / len(c.quantities), float(clash and matched < len(c.quantities))
