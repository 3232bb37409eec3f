"""Training and honest evaluation of the learned verifier on SciFact-format data.

1. Every claim × cited abstract is a pair labelled SUPPORT / CONTRADICT / NEI.
2. Pair features come from :mod:`features` (frozen MiniLM sentences + lexical checks).
3. A claim's verdict (for threshold selection) is the rule over its pairs: FAIL when any pair's
   P(contradict) reaches the contradict threshold, else PASS when any pair's
   P(support) reaches the support threshold, else UNCERTAIN.
4. Thresholds maximize macro-F1 subject to an escape rate (gold CONTRADICT predicted
   PASS) of at most ``max_escape``, chosen on out-of-fold predictions of the training
   folds only (nested), so the outer fold's figure never saw its own labels.
5. Folds are grouped by cited abstract (:func:`scifact.grouped_folds`).
6. Scores are calibrated (:func:`calibrate`): Platt scaling per class, each fold model's
   fitted on the other folds' out-of-fold predictions, so a vote's score is the probability
   that the pair has that gold label; the thresholds of 4. stay on the raw probabilities.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from research.bench.scifact import SciFactClaim, SciFactDoc
from research.pipeline.verify.features import FEATURE_NAMES, item_sentences, pair_features
from research.pipeline.verify.learned import CLASSES, LinearModel, VerifierWeights
from research.pipeline.verify.records import EvidenceItem

if TYPE_CHECKING:
    from numpy.typing import NDArray

Encode = Callable[[list[str]], "NDArray[np.float32]"]
_GRID = np.round(np.arange(0.30, 0.96, 0.025), 3)


@dataclass
class PairDataset:
    x: NDArray[np.float64]  # (pairs, features)
    y: NDArray[np.int64]  # pair label index into CLASSES
    pair_claim: NDArray[np.int64]  # pair -> claim row
    claim_y: NDArray[np.int64]  # claim label index
    claim_ids: list[int]

    def subset(self, claim_rows: NDArray[np.int64]) -> PairDataset:
        keep = np.isin(self.pair_claim, claim_rows)
        remap = {int(r): i for i, r in enumerate(claim_rows)}
        return PairDataset(
            self.x[keep],
            self.y[keep],
            np.array([remap[int(r)] for r in self.pair_claim[keep]], dtype=np.int64),
            self.claim_y[claim_rows],
            [self.claim_ids[int(r)] for r in claim_rows],
        )


# The features of one claim's pairs: (item, its sentences, their vectors, the claim's vector).
PairFeaturizer = Callable[
    [EvidenceItem, list[str], "NDArray[np.float32]", "NDArray[np.float32]"], "NDArray[np.float64]"
]


def _learned_features(claim: SciFactClaim) -> PairFeaturizer:
    def featurize(
        item: EvidenceItem,
        sentences: list[str],
        vectors: NDArray[np.float32],
        u: NDArray[np.float32],
    ) -> NDArray[np.float64]:
        return pair_features(claim.text, sentences, u, vectors).values

    return featurize


def build_pairs(
    claims: Sequence[SciFactClaim],
    docs: dict[int, SciFactDoc],
    encode: Encode,
    *,
    featurizer: Callable[[SciFactClaim], PairFeaturizer] = _learned_features,
    width: int = len(FEATURE_NAMES),
) -> PairDataset:
    """One row per claim × cited abstract, labelled by the abstract's gold label (NEI when
    it has none); ``featurizer`` gives a claim's pair features (default: the learned
    family's, ``width`` of them)."""
    rows, labels, owners = [], [], []
    for row, claim in enumerate(claims):
        featurize = featurizer(claim)
        u = encode([claim.text])[0]
        for doc_id in claim.cited_doc_ids:
            if doc_id not in docs:
                continue
            item = docs[doc_id].item()
            sentences = [item.text[a:b] for a, b in item_sentences(item)]
            rows.append(featurize(item, sentences, encode(sentences), u))
            labels.append(CLASSES.index(claim.doc_labels.get(doc_id, "NEI")))
            owners.append(row)
    return PairDataset(
        np.vstack(rows) if rows else np.zeros((0, width)),
        np.asarray(labels, dtype=np.int64),
        np.asarray(owners, dtype=np.int64),
        np.asarray([CLASSES.index(c.label) for c in claims], dtype=np.int64),
        [c.claim_id for c in claims],
    )


def fit(x: NDArray[np.float64], y: NDArray[np.int64], c: float, seed: int) -> LinearModel:
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    clf = LogisticRegression(C=c, class_weight="balanced", max_iter=2000, random_state=seed)
    clf.fit((x - mean) / scale, y)
    coef = np.zeros((len(CLASSES), x.shape[1]))
    intercept = np.zeros(len(CLASSES))
    for i, label in enumerate(clf.classes_):
        coef[int(label)] = clf.coef_[i]
        intercept[int(label)] = clf.intercept_[i]
    return LinearModel(mean, scale, coef, intercept, 0.5, 0.5)


def decide(
    p: NDArray[np.float64], pair_claim: NDArray[np.int64], n_claims: int, t_s: float, t_c: float
) -> NDArray[np.int64]:
    """Claim predictions (indices into CLASSES) by the conservative production rule."""
    max_s = np.zeros(n_claims)
    max_c = np.zeros(n_claims)
    np.maximum.at(max_s, pair_claim, p[:, 0])
    np.maximum.at(max_c, pair_claim, p[:, 1])
    pred = np.full(n_claims, CLASSES.index("NEI"), dtype=np.int64)
    pred[max_s >= t_s] = CLASSES.index("SUPPORT")
    pred[max_c >= t_c] = CLASSES.index("CONTRADICT")
    return pred


def metrics(gold: NDArray[np.int64], pred: NDArray[np.int64]) -> dict[str, float]:
    out: dict[str, float] = {"accuracy": float((gold == pred).mean()) if len(gold) else 0.0}
    f1s = []
    for i, name in enumerate(("support", "contradict", "nei")):
        tp = float(((pred == i) & (gold == i)).sum())
        fp = float(((pred == i) & (gold != i)).sum())
        fn = float(((pred != i) & (gold == i)).sum())
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        out[f"f1_{name}"] = f1
        f1s.append(f1)
    out["macro_f1"] = float(np.mean(f1s))
    contradict = gold == CLASSES.index("CONTRADICT")
    escaped = contradict & (pred == CLASSES.index("SUPPORT"))
    out["escape_rate"] = float(escaped.sum() / contradict.sum()) if contradict.any() else 0.0
    return out


def choose_thresholds(
    p: NDArray[np.float64],
    pair_claim: NDArray[np.int64],
    claim_y: NDArray[np.int64],
    max_escape: float,
) -> tuple[float, float, float]:
    """(t_support, t_contradict, macro-F1) maximizing macro-F1 with escape ≤ max_escape."""
    best = (0.99, 0.5, -1.0)
    for t_s in _GRID:
        for t_c in _GRID:
            pred = decide(p, pair_claim, len(claim_y), float(t_s), float(t_c))
            m = metrics(claim_y, pred)
            if m["escape_rate"] <= max_escape and m["macro_f1"] > best[2]:
                best = (float(t_s), float(t_c), m["macro_f1"])
    return best


def oof_proba(
    data: PairDataset, claim_fold: NDArray[np.int64], c: float, seed: int
) -> NDArray[np.float64]:
    """Out-of-fold pair probabilities (each pair scored by a model that never saw it)."""
    p = np.zeros((len(data.y), len(CLASSES)))
    pair_fold = claim_fold[data.pair_claim]
    for fold in np.unique(claim_fold):
        test = pair_fold == fold
        model = fit(data.x[~test], data.y[~test], c, seed)
        p[test] = model.proba(data.x[test])
    return p


@dataclass
class FoldResult:
    model: LinearModel
    test_claims: list[int]


def cross_validate(
    data: PairDataset,
    claim_fold: NDArray[np.int64],
    *,
    c: float,
    seed: int,
    max_escape: float,
) -> tuple[NDArray[np.int64], list[FoldResult]]:
    """Outer grouped CV with thresholds chosen by inner grouped CV on the training folds."""
    pred = np.zeros(len(data.claim_y), dtype=np.int64)
    results: list[FoldResult] = []
    folds = sorted(int(f) for f in np.unique(claim_fold))
    for fold in folds:
        train_rows = np.flatnonzero(claim_fold != fold)
        test_rows = np.flatnonzero(claim_fold == fold)
        train = data.subset(train_rows)
        inner = claim_fold[train_rows]
        t_s, t_c, _ = choose_thresholds(
            oof_proba(train, inner, c, seed), train.pair_claim, train.claim_y, max_escape
        )
        base = fit(train.x, train.y, c, seed)
        model = LinearModel(base.mean, base.scale, base.coef, base.intercept, t_s, t_c)
        test = data.subset(test_rows)
        pred[test_rows] = decide(model.proba(test.x), test.pair_claim, len(test_rows), t_s, t_c)
        results.append(FoldResult(model, test.claim_ids))
    return pred, results


def claim_only_baseline(
    claims: Sequence[SciFactClaim], encode: Encode, claim_fold: NDArray[np.int64], seed: int
) -> dict[str, float]:
    """What the claim's wording alone predicts (no evidence): the artifact to stay above."""
    from sklearn.linear_model import LogisticRegression

    from research.pipeline.language.direction import direction, negation_count
    from research.pipeline.language.lexicon import hedges
    from research.pipeline.language.quantities import quantities

    emb = encode([c.text for c in claims]).astype(np.float64)
    hand = np.array(
        [
            [
                negation_count(c.text),
                direction(c.text),
                len(hedges(c.text)),
                len(quantities(c.text)),
            ]
            for c in claims
        ],
        dtype=np.float64,
    )
    x = np.hstack([emb, hand])
    y = np.asarray([CLASSES.index(c.label) for c in claims], dtype=np.int64)
    pred = np.zeros(len(y), dtype=np.int64)
    for fold in np.unique(claim_fold):
        test = claim_fold == fold
        clf = LogisticRegression(C=1.0, class_weight="balanced", max_iter=3000, random_state=seed)
        clf.fit(x[~test], y[~test])
        pred[test] = clf.predict(x[test])
    return metrics(y, pred)


def always_support_baseline(claims: Sequence[SciFactClaim]) -> dict[str, float]:
    y = np.asarray([CLASSES.index(c.label) for c in claims], dtype=np.int64)
    return metrics(y, np.zeros(len(y), dtype=np.int64))


@dataclass(frozen=True)
class TrainConfig:
    c: float = 0.1
    max_escape: float = 0.04  # inner target; leaves room under the 5% product bar
    folds: int = 5
    fold_seed: int = 13
    seed: int = 0


def train_and_evaluate(
    claims: Sequence[SciFactClaim],
    docs: dict[int, SciFactDoc],
    encode: Encode,
    cfg: TrainConfig,
) -> tuple[VerifierWeights, dict[str, float]]:
    """1. pairs, 2. grouped nested CV figures, 3. full model with CV-chosen thresholds."""
    from research.bench.scifact import grouped_folds

    data = build_pairs(claims, docs, encode)
    fold_of = grouped_folds(list(claims), cfg.folds, cfg.fold_seed)
    claim_fold = np.asarray([fold_of[c.claim_id] for c in claims], dtype=np.int64)
    pred, fold_results = cross_validate(
        data, claim_fold, c=cfg.c, seed=cfg.seed, max_escape=cfg.max_escape
    )
    t_s, t_c, _ = choose_thresholds(
        oof_proba(data, claim_fold, cfg.c, cfg.seed), data.pair_claim, data.claim_y, cfg.max_escape
    )
    base = fit(data.x, data.y, cfg.c, cfg.seed)
    model = LinearModel(base.mean, base.scale, base.coef, base.intercept, t_s, t_c)
    report = {f"cv_{k}": v for k, v in metrics(data.claim_y, pred).items()}
    report |= {f"always_support_{k}": v for k, v in always_support_baseline(claims).items()}
    report |= {
        f"claim_only_{k}": v
        for k, v in claim_only_baseline(claims, encode, claim_fold, cfg.seed).items()
    }
    report |= {"claims": float(len(claims)), "pairs": float(len(data.y))}
    calibration = calibrate(data, claim_fold, [r.model for r in fold_results])
    report |= calibration.report
    weights = VerifierWeights(
        model=replace(model, calibration=calibration.shipped),
        folds=[
            replace(r.model, calibration=c)
            for r, c in zip(fold_results, calibration.folds, strict=True)
        ],
        claim_folds={str(c.claim_id): int(f) for c, f in zip(claims, claim_fold, strict=True)},
        meta={"config": cfg.__dict__, "report": report, "classes": list(CLASSES)},
    )
    return weights, report


def platt(p: NDArray[np.float64], y: NDArray[np.float64], seed: int = 0) -> tuple[float, float]:
    """(a, b) with sigmoid(a * log p + b) ≈ P(y = 1): Platt scaling on one probability."""
    from sklearn.linear_model import LogisticRegression

    x = np.log(np.clip(p, 1e-6, 1.0)).reshape(-1, 1)
    if len(set(y.tolist())) < 2:
        return 1.0, 0.0
    clf = LogisticRegression(C=1e6, max_iter=1000, random_state=seed).fit(x, y)
    return float(clf.coef_[0][0]), float(clf.intercept_[0])


CALIBRATED = {"support": 0, "contradict": 1}  # label -> column of CLASSES


@dataclass
class Calibration:
    """Platt parameters per fold model (fitted on the *other* folds' out-of-fold
    predictions) and for the shipped model (on all of them), with pair-level ECE."""

    folds: list[dict[str, tuple[float, float]]]
    shipped: dict[str, tuple[float, float]]
    report: dict[str, float]


def calibrate(
    data: PairDataset, claim_fold: NDArray[np.int64], fold_models: Sequence[LinearModel]
) -> Calibration:
    """1. each pair scored by the fold model that never saw it; 2. per fold and class,
    Platt on the other folds' scores; 3. ECE of the raw and the calibrated scores."""
    pair_fold = claim_fold[data.pair_claim]
    p = np.zeros((len(data.y), len(CLASSES)))
    for fold, model in enumerate(fold_models):
        inside = pair_fold == fold
        p[inside] = model.proba(data.x[inside])
    folds: list[dict[str, tuple[float, float]]] = []
    calibrated = np.zeros((len(data.y), 2))
    for fold in range(len(fold_models)):
        inside = pair_fold == fold
        params = {
            label: platt(p[~inside, col], (data.y[~inside] == col).astype(np.float64))
            for label, col in CALIBRATED.items()
        }
        folds.append(params)
        for label, col in CALIBRATED.items():
            a, b = params[label]
            z = a * np.log(np.clip(p[inside, col], 1e-6, 1.0)) + b
            calibrated[inside, col] = 1.0 / (1.0 + np.exp(-z))
    shipped = {
        label: platt(p[:, col], (data.y == col).astype(np.float64))
        for label, col in CALIBRATED.items()
    }
    report: dict[str, float] = {}
    for label, col in CALIBRATED.items():
        truth = data.y == col
        report[f"ece_raw_{label}"] = pair_ece(p[:, col], truth)
        report[f"ece_calibrated_{label}"] = pair_ece(calibrated[:, col], truth)
    return Calibration(folds, shipped, report)


def pair_ece(confidence: NDArray[np.float64], truth: NDArray[np.bool_], bins: int = 10) -> float:
    edges = np.minimum((np.clip(confidence, 0.0, 1.0) * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            gap = abs(float(truth[inside].mean()) - float(confidence[inside].mean()))
            total += float(inside.sum()) / len(confidence) * gap
    return round(total, 4)


def calibrated_weights(
    weights: VerifierWeights,
    claims: Sequence[SciFactClaim],
    docs: dict[int, SciFactDoc],
    encode: Encode,
) -> tuple[VerifierWeights, dict[str, float]]:
    """The same models with Platt calibration added (their coefficients unchanged)."""
    data = build_pairs(claims, docs, encode)
    fold_of = {int(k): v for k, v in weights.claim_folds.items()}
    claim_fold = np.asarray([fold_of[c.claim_id] for c in claims], dtype=np.int64)
    result = calibrate(data, claim_fold, weights.folds)
    calibrated = VerifierWeights(
        model=replace(weights.model, calibration=result.shipped),
        folds=[replace(m, calibration=c) for m, c in zip(weights.folds, result.folds, strict=True)],
        claim_folds=weights.claim_folds,
        meta={**weights.meta, "calibration": result.report},
    )
    return calibrated, result.report
