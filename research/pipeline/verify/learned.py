"""The offline learned verifier: logistic regression over frozen MiniLM + lexical pair features.

Trained by ``manage.py train_verifier`` (data and figures: docs/verifier.md).
The weights are plain JSON (no pickle): standardization, coefficients, the two decision
thresholds picked for a contradiction escape rate of at most 5%, and, for honest
in-sample benchmarking, one model per grouped cross-validation fold with the claim ids
it never saw.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from research.pipeline.verify.features import FEATURE_NAMES, item_sentences, pair_features
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict

if TYPE_CHECKING:
    from numpy.typing import NDArray

WEIGHTS_PATH = Path(__file__).resolve().parent / "weights" / "learned_verifier.json"
CLASSES = ("SUPPORT", "CONTRADICT", "NEI")
Encode = Callable[[list[str]], "NDArray[np.float32]"]


class LearnedUnavailable(RuntimeError):
    permanent = True


@dataclass(frozen=True)
class Decision:
    """A linear model's vote on one pair: verdict, score and the probabilities in words."""

    verdict: VoteVerdict
    score: float
    summary: str


@dataclass(frozen=True)
class LinearModel:
    """Multinomial logistic regression on standardized features, with decision thresholds."""

    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    coef: NDArray[np.float64]  # (classes, features)
    intercept: NDArray[np.float64]
    support_threshold: float
    contradict_threshold: float
    feature_names: tuple[str, ...] = FEATURE_NAMES
    # Platt scaling per class ("support", "contradict"): P(pair has that gold label) =
    # sigmoid(a * log p + b), fitted on out-of-fold predictions of *other* folds, so a
    # vote's score is a calibrated probability. Empty: scores are the raw probabilities.
    calibration: dict[str, tuple[float, float]] = field(default_factory=dict)

    def calibrated(self, label: str, p: float) -> float:
        """The calibrated probability behind a raw class probability ``p``."""
        if label not in self.calibration:
            return p
        a, b = self.calibration[label]
        return float(1.0 / (1.0 + np.exp(-(a * np.log(max(p, 1e-6)) + b))))

    def decide(self, p: NDArray[np.float64], *, may_support: bool = True) -> Decision:
        """The vote these class probabilities make under the model's thresholds.

        A contradiction above its threshold wins; support needs its threshold, to be the
        most likely of the three labels (issue 26: a vote at P(support) 0.21 against
        P(contradict) 0.56 is not a reading that the passage states the claim) and
        ``may_support`` (a family's own veto); anything else is insufficient. The score is
        the calibrated probability of the verdict's class (the raw one for insufficient).
        """
        p_s, p_c, p_n = (float(x) for x in p)
        c_s, c_c = self.calibrated("support", p_s), self.calibrated("contradict", p_c)
        if p_c >= self.contradict_threshold:
            verdict, score = VoteVerdict.CONTRADICTS, c_c
        elif p_s >= self.support_threshold and p_s >= max(p_c, p_n) and may_support:
            verdict, score = VoteVerdict.SUPPORTS, c_s
        else:
            verdict, score = VoteVerdict.INSUFFICIENT, p_n
        summary = (
            f"P(support)={p_s:.2f}, P(contradict)={p_c:.2f}, P(not enough info)={p_n:.2f}; "
            f"thresholds support≥{self.support_threshold:.2f} (and the most likely), "
            f"contradict≥{self.contradict_threshold:.2f}; calibrated "
            f"P(support)={c_s:.2f}, P(contradict)={c_c:.2f}"
        )
        return Decision(verdict, score, summary)

    def proba(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        z = ((np.atleast_2d(x) - self.mean) / self.scale) @ self.coef.T + self.intercept
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "feature_names": list(self.feature_names),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "coef": self.coef.tolist(),
            "intercept": self.intercept.tolist(),
            "support_threshold": self.support_threshold,
            "contradict_threshold": self.contradict_threshold,
            "calibration": {k: list(v) for k, v in sorted(self.calibration.items())},
        }

    @classmethod
    def from_json(
        cls, data: dict[str, Any], expected: tuple[str, ...] = FEATURE_NAMES
    ) -> LinearModel:
        names = tuple(data["feature_names"])
        if names != expected:
            raise LearnedUnavailable("weights were trained on other features; retrain them")
        return cls(
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            coef=np.asarray(data["coef"], dtype=np.float64),
            intercept=np.asarray(data["intercept"], dtype=np.float64),
            support_threshold=float(data["support_threshold"]),
            contradict_threshold=float(data["contradict_threshold"]),
            feature_names=names,
            calibration={
                str(k): (float(v[0]), float(v[1])) for k, v in data.get("calibration", {}).items()
            },
        )


@dataclass
class VerifierWeights:
    """The shipped model, the per-fold models, and what they were trained on."""

    model: LinearModel
    folds: list[LinearModel] = field(default_factory=list)
    claim_folds: dict[str, int] = field(default_factory=dict)  # training claim id -> fold
    meta: dict[str, Any] = field(default_factory=dict)

    def for_claim(self, claim_id: str) -> tuple[LinearModel, bool]:
        """The model that never saw this claim in training, and whether one exists."""
        fold = self.claim_folds.get(claim_id)
        if fold is None or fold >= len(self.folds):
            return self.model, claim_id not in self.claim_folds
        return self.folds[fold], True

    def save(self, path: Path = WEIGHTS_PATH) -> None:
        payload = {
            "meta": self.meta,
            "model": self.model.to_json(),
            "folds": [m.to_json() for m in self.folds],
            "claim_folds": self.claim_folds,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(
        cls, path: Path = WEIGHTS_PATH, *, feature_names: tuple[str, ...] = FEATURE_NAMES
    ) -> VerifierWeights:
        """Weights of a model over ``feature_names`` (the learned family's by default)."""
        if not path.exists():
            raise LearnedUnavailable(f"no learned verifier weights at {path}")
        data = json.loads(path.read_text())
        return cls(
            model=LinearModel.from_json(data["model"], feature_names),
            folds=[LinearModel.from_json(f, feature_names) for f in data.get("folds", [])],
            claim_folds={str(k): int(v) for k, v in data.get("claim_folds", {}).items()},
            meta=data.get("meta", {}),
        )


class LinearFamily:
    """What the learned and align families share: weights (the shipped model, or the fold
    model that never saw the claim being benchmarked, ``out_of_fold``) and one encoding of
    the claim and every sentence of the passages it is judged against."""

    def __init__(
        self, weights: VerifierWeights, encode: Encode, *, out_of_fold: bool = False
    ) -> None:
        self.weights = weights
        self.encode = encode
        self.out_of_fold = out_of_fold

    def model_for(self, claim: ClaimInput) -> LinearModel:
        if self.out_of_fold:
            return self.weights.for_claim(claim.claim_id)[0]
        return self.weights.model

    def encode_items(
        self, claim: ClaimInput, items: Sequence[EvidenceItem]
    ) -> tuple[
        NDArray[np.float32], list[tuple[EvidenceItem, list[tuple[int, int]], NDArray[np.float32]]]
    ]:
        """The claim's vector, and per item its sentence spans with their vectors."""
        spans = [item_sentences(item) for item in items]
        texts = [item.text[a:b] for item, sp in zip(items, spans, strict=True) for a, b in sp]
        vectors = self.encode([claim.text, *texts])
        per_item, cursor = [], 1
        for item, sp in zip(items, spans, strict=True):
            per_item.append((item, sp, vectors[cursor : cursor + len(sp)]))
            cursor += len(sp)
        return vectors[0], per_item


class LearnedVerifier(LinearFamily):
    """Votes per claim–passage pair; quotes the passage sentence its features centred on."""

    family = "learned"
    name = "learned-minilm-lr"

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        if not items:
            return []
        model = self.model_for(claim)
        u, per_item = self.encode_items(claim, items)
        votes = []
        for item, sp, vectors in per_item:
            sentences = [item.text[a:b] for a, b in sp]
            feats = pair_features(claim.text, sentences, u, vectors)
            p = model.proba(feats.values)[0]
            votes.append(self._vote(claim, item, model, p, sentences[feats.best]))
        return votes

    def _vote(
        self,
        claim: ClaimInput,
        item: EvidenceItem,
        model: LinearModel,
        p: NDArray[np.float64],
        quote: str,
    ) -> Vote:
        decision = model.decide(p)
        return Vote.bind(
            self.name,
            self.family,
            claim,
            item,
            verdict=decision.verdict,
            score=decision.score,
            quote=quote,
            rationale=decision.summary,
        )
