"""The recipe of the shipped entailment model: which data, which stages (``train_nli``).

Stage ``base`` reads ``pairs/mix.jsonl`` (minus a seeded held-back sample for accuracy)
and no SciFact: its ONNX export under ``work/base/onnx`` is the no-SciFact model, the
honest out-of-domain estimate. Stage ``folds`` trains ``base`` further once per grouped
SciFact-train fold with that fold's claims held out and exports each to
``work/fold<k>/onnx``; ``bench_verification --split train`` scores every claim with the
fold model that never saw it. Stage ``final`` trains ``base`` on all of SciFact train and
exports the graph the product ships (``research/pipeline/verify/weights/nli/``).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from research.bench import nli_training as nt
from research.providers.base import file_sha256

HELD_BACK = 1000  # entailment pairs kept out of training, for an accuracy check
SHUFFLE_SEED = 7  # the shuffle that chooses them
REPLAY = 3000  # stage A pairs mixed into each stage B run, so it does not forget them
SCIFACT_REPEAT = 2  # stage B sees each SciFact pair this many times
FOLDS = 5
# Claim-level bounds the decision thresholds are chosen within (below the acceptance
# bounds of 0.05 and 0.10, for a margin on unseen claims).
MAX_ESCAPE = 0.04
MAX_FALSE_FAIL = 0.08
GRID = np.round(np.arange(0.5, 0.9751, 0.025), 3)
BASE_LEARNING_RATE = 5e-5
TUNE_LEARNING_RATE = 3e-5

SHIPPED = Path(__file__).resolve().parents[1] / "pipeline" / "verify" / "weights" / "nli"


def run(
    nli_dir: Path,
    scifact_dir: Path,
    work: Path,
    stage: str,
    *,
    base_epochs: float = 2.0,
    threads: int = 0,
    target: Path = SHIPPED,
    log: Callable[[str], None] = print,
) -> None:
    from research.bench.scifact import grouped_folds, load_claims, load_corpus

    work.mkdir(parents=True, exist_ok=True)
    mix = nli_dir / "pairs" / "mix.jsonl"
    if not mix.is_file():
        raise ValueError(f"{mix} does not exist (give --nli the shared/data/nli folder)")
    pairs = nt.load_pairs(mix)
    shuffled = list(pairs)
    random.Random(SHUFFLE_SEED).shuffle(shuffled)
    held_back, train_a = shuffled[:HELD_BACK], shuffled[HELD_BACK:]
    data = {"mix.jsonl": file_sha256(mix)}
    base = work / "base"
    if stage in ("all", "base") and not (base / "figures.json").is_file():
        log(f"stage base: {len(train_a)} pairs {nt.class_counts(train_a)}")
        config = nt.TrainConfig(
            epochs=base_epochs, threads=threads, learning_rate=BASE_LEARNING_RATE
        )
        figures = _trained(base, lambda: nt.train(train_a, nt.base_model_path(), base, config, log))
        figures["held_back_accuracy"] = _accuracy(base, held_back)
        figures["data"] = {**data, "held_back": HELD_BACK}
        figures["onnx"] = nt.export_onnx(base, base / "onnx")
        figures["held_back_accuracy_int8"] = _onnx_accuracy(base / "onnx", held_back)
        (base / "figures.json").write_text(json.dumps(figures, indent=1))
        log(f"stage base done: {_short(figures)}")
    if stage == "base":
        return
    if not (base / "figures.json").is_file():
        raise ValueError(f"{base} has no trained base model: run --stage base first")
    claims = load_claims(scifact_dir, "train")
    docs = load_corpus(scifact_dir)
    data["claims_train.jsonl"] = file_sha256(scifact_dir / "claims_train.jsonl")
    data["corpus.jsonl"] = file_sha256(scifact_dir / "corpus.jsonl")
    replay = random.Random(11).sample(train_a, min(REPLAY, len(train_a)))
    folds = grouped_folds(claims, k=FOLDS)
    if stage in ("all", "folds"):
        for fold in range(FOLDS):
            out = work / f"fold{fold}"
            if (out / "figures.json").is_file():
                continue
            seen = [c for c in claims if folds[c.claim_id] != fold]
            figures = _tune(base, seen, docs, replay, out, threads, log)
            figures["held_out_claims"] = sum(1 for c in claims if folds[c.claim_id] == fold)
            (out / "figures.json").write_text(json.dumps(figures, indent=1))
            log(f"fold {fold} done: {_short(figures)}")
        (work / "claim_folds.json").write_text(
            json.dumps({str(k): v for k, v in sorted(folds.items())})
        )
    if stage in ("all", "folds", "calibrate"):
        calibration = _calibrate(work, claims, docs, folds, log)
        (work / "calibration.json").write_text(json.dumps(calibration, indent=1))
        if stage == "calibrate" and (target / "nli.json").is_file():
            # Recalibrating leaves the shipped graph as it is (``final`` trained it on
            # the same base): its manifest and training record get the new parameters.
            _set_calibration(target, calibration["shipped"], calibration["thresholds"])
            record = json.loads((target / "training.json").read_text())
            record["final"]["calibration"] = calibration["report"]
            (target / "training.json").write_text(json.dumps(record, indent=1) + "\n")
            log(f"recalibrated {target / 'nli.json'}")
    if stage in ("all", "final"):
        out = work / "final"
        if not (out / "figures.json").is_file():
            figures = _tune(base, claims, docs, replay, out, threads, log)
            (out / "figures.json").write_text(json.dumps(figures, indent=1))
        figures = json.loads((out / "figures.json").read_text())
        calibration = json.loads((work / "calibration.json").read_text())
        _set_calibration(out / "onnx", calibration["shipped"], calibration["thresholds"])
        figures["calibration"] = calibration["report"]
        _ship(out, target, figures, json.loads((base / "figures.json").read_text()), data)
        log(f"shipped {target}")


def _tune(
    base: Path,
    claims: Sequence[Any],
    docs: dict[int, Any],
    replay: Sequence[nt.Pair],
    out: Path,
    threads: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    scifact = nt.scifact_pairs(claims, docs)
    train = list(replay) + scifact * SCIFACT_REPEAT
    log(
        f"stage tune -> {out.name}: {len(scifact)} SciFact pairs {nt.class_counts(scifact)}"
        f" x{SCIFACT_REPEAT} + {len(replay)} replayed"
    )
    config = nt.TrainConfig(epochs=1.0, threads=threads, learning_rate=TUNE_LEARNING_RATE)
    figures = _trained(out, lambda: nt.train(train, base, out, config, log))
    figures["scifact_pairs"] = len(scifact)
    figures["onnx"] = nt.export_onnx(out, out / "onnx")
    return figures


def _trained(out: Path, train: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Train once: the training figures are kept beside the weights (``train.json``), so
    a run interrupted after training (in the export, say) resumes without retraining."""
    done = out / "train.json"
    if done.is_file() and (out / "model.safetensors").is_file():
        return dict(json.loads(done.read_text()))
    figures = train()
    done.write_text(json.dumps(figures, indent=1))
    return figures


def _onnx_accuracy(directory: Path, pairs: Sequence[nt.Pair]) -> float:
    from research.pipeline.verify.nli import OnnxScorer

    probs = OnnxScorer(directory).probs([(p.premise, p.hypothesis) for p in pairs])
    gold = np.asarray([p.label for p in pairs])
    return round(float((probs.argmax(1) == gold).mean()), 4)


def _accuracy(model: Path, pairs: Sequence[nt.Pair]) -> float:
    probs = nt.predict(model, [(p.premise, p.hypothesis) for p in pairs])
    gold = np.asarray([p.label for p in pairs])
    return round(float((probs.argmax(1) == gold).mean()), 4)


def _ship(
    final: Path, target: Path, figures: dict[str, Any], base: dict[str, Any], data: dict[str, str]
) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json", "nli.json"):
        shutil.copyfile(final / "onnx" / name, target / name)
    training = {"base": base, "final": figures, "data": data}
    (target / "training.json").write_text(json.dumps(training, indent=1) + "\n")


def _short(figures: dict[str, Any]) -> str:
    keys = ("pairs", "seconds", "pairs_per_s", "final_loss", "held_back_accuracy")
    return ", ".join(f"{k} {figures[k]}" for k in keys if k in figures)


def doc_scores(
    scorer: Any, claims: Sequence[Any], docs: dict[int, Any]
) -> list[tuple[int, str, float, float]]:
    """(claim id, gold doc label, best entailment, best contradiction) per cited abstract,
    read as the product reads it (:func:`research.pipeline.verify.nli.windows`): the
    highest probability among windows whose most likely label it is (0 if none)."""
    from research.pipeline.verify import nli

    rows: list[tuple[int, str, float, float]] = []
    pairs: list[tuple[str, str]] = []
    spans: list[tuple[int, str, int]] = []
    for claim in claims:
        for doc_id in claim.cited_doc_ids:
            if doc_id not in docs:
                continue
            item = docs[doc_id].item()
            texts = [item.text[a:b] for a, b in nli.windows(item)]
            spans.append((claim.claim_id, claim.doc_labels.get(doc_id, "NEI"), len(texts)))
            pairs.extend((t, claim.text) for t in texts)
    probs = scorer.probs(pairs)
    cursor = 0
    for claim_id, label, n in spans:
        block = probs[cursor : cursor + n]
        cursor += n
        top = block.argmax(1)
        ent = np.where(top == nli.ENTAILMENT, block[:, nli.ENTAILMENT], 0.0).max()
        con = np.where(top == nli.CONTRADICTION, block[:, nli.CONTRADICTION], 0.0).max()
        rows.append((claim_id, label, float(ent), float(con)))
    return rows


def _calibrate(
    work: Path,
    claims: Sequence[Any],
    docs: dict[int, Any],
    folds: dict[int, int],
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Platt scaling of the best-window entailment and contradiction, per abstract.

    Each claim's abstracts are scored by the fold model that never saw the claim; each
    fold model's calibration is fitted on the *other* folds' scores (written into its
    manifest), the shipped model's on all of them. ECE of raw and calibrated scores is
    reported out-of-fold."""
    from research.bench.verifier_training import pair_ece, platt
    from research.pipeline.verify.nli import OnnxScorer

    rows: list[tuple[int, int, str, float, float]] = []
    for fold in range(FOLDS):
        held = [c for c in claims if folds[c.claim_id] == fold]
        scorer = OnnxScorer(work / f"fold{fold}" / "onnx")
        rows += [(fold, *row) for row in doc_scores(scorer, held, docs)]
        log(f"calibration: fold {fold} scored ({len(held)} claims)")
    gold = {c.claim_id: c.label for c in claims}
    fold_of = np.asarray([r[0] for r in rows])
    labels = [r[2] for r in rows]
    scores = {
        "support": np.asarray([r[3] for r in rows]),
        "contradict": np.asarray([r[4] for r in rows]),
    }
    truth = {
        "support": np.asarray([lab == "SUPPORT" for lab in labels], dtype=np.float64),
        "contradict": np.asarray([lab == "CONTRADICT" for lab in labels], dtype=np.float64),
    }
    report: dict[str, Any] = {}
    per_fold: list[dict[str, list[float]]] = []
    params_cut: list[dict[str, float]] = []
    calibrated = {k: np.zeros(len(rows)) for k in scores}
    for fold in range(FOLDS):
        inside = fold_of == fold
        params = {k: list(platt(scores[k][~inside], truth[k][~inside])) for k in scores}
        per_fold.append(params)
        for k, (a, b) in params.items():
            calibrated[k][inside] = _sigmoid(a * np.log(np.clip(scores[k][inside], 1e-6, 1)) + b)
        others = [r[1:] for r, out in zip(rows, inside, strict=True) if not out]
        cut = choose_thresholds(others, gold)
        _set_calibration(work / f"fold{fold}" / "onnx", params, cut)
        params_cut.append(cut)
    for k in scores:
        report[f"ece_raw_{k}"] = pair_ece(scores[k], truth[k].astype(bool))
        report[f"ece_calibrated_{k}"] = pair_ece(calibrated[k], truth[k].astype(bool))
    shipped = {k: list(platt(scores[k], truth[k])) for k in scores}
    thresholds = choose_thresholds([r[1:] for r in rows], gold)
    report["thresholds_per_fold"] = params_cut
    log(f"calibration: {report}; thresholds {thresholds}")
    return {
        "folds": per_fold,
        "shipped": shipped,
        "thresholds": thresholds,
        "report": report,
        "abstracts": len(rows),
    }


Rows = Sequence[tuple[int, str, float, float]]  # claim id, doc label, entailment, contradiction


def claim_decisions(
    rows: Rows, gold: dict[int, str], support_at: float, contradict_at: float
) -> tuple[list[str], list[str]]:
    """(gold, predicted) claim labels when the NLI family decides alone: a claim is
    CONTRADICT when an abstract's best contradiction reaches ``contradict_at`` and beats
    its entailment, else SUPPORT when one's entailment reaches ``support_at``. ``gold``:
    each claim's own label (:attr:`SciFactClaim.label`)."""
    grouped = _by_claim(rows, gold)
    return [label for label, _ in grouped], _decide(grouped, support_at, contradict_at)


def choose_thresholds(rows: Rows, gold: dict[int, str]) -> dict[str, float]:
    """The (support, contradict) thresholds on the raw best-window probability maximizing
    claim macro-F1 with escape (gold CONTRADICT that would PASS) ≤ ``MAX_ESCAPE`` and
    false FAIL (gold SUPPORT that would FAIL) ≤ ``MAX_FALSE_FAIL``; the strictest pair
    when none meets both."""
    from research.bench.scifact import CLASSES
    from research.bench.verification import decision_metrics
    from research.bench.verifier_training import metrics

    grouped = _by_claim(rows, gold)
    truth = np.asarray([CLASSES.index(label) for label, _ in grouped], dtype=np.int64)
    best: tuple[float, float, float] = (-1.0, float(GRID[-1]), float(GRID[-1]))
    if not grouped:
        return {"support": best[1], "contradict": best[2], "oof_macro_f1_alone": best[0]}
    for support_at in GRID:
        for contradict_at in GRID:
            decided = _decide(grouped, float(support_at), float(contradict_at))
            pred = np.asarray([CLASSES.index(label) for label in decided], dtype=np.int64)
            m = metrics(truth, pred)
            false_fail = decision_metrics(truth, pred, np.zeros(0))["false_fail_rate"]
            if m["escape_rate"] > MAX_ESCAPE or false_fail > MAX_FALSE_FAIL:
                continue
            if m["macro_f1"] > best[0]:
                best = (m["macro_f1"], float(support_at), float(contradict_at))
    return {"support": best[1], "contradict": best[2], "oof_macro_f1_alone": round(best[0], 4)}


def _by_claim(rows: Rows, gold: dict[int, str]) -> list[tuple[str, list[tuple[float, float]]]]:
    """Each claim's gold label and its abstracts' (entailment, contradiction)."""
    by_claim: dict[int, list[tuple[float, float]]] = {}
    for claim_id, _, ent, con in rows:
        by_claim.setdefault(claim_id, []).append((ent, con))
    return [(gold[claim_id], docs) for claim_id, docs in by_claim.items()]


def _decide(
    grouped: Sequence[tuple[str, list[tuple[float, float]]]],
    support_at: float,
    contradict_at: float,
) -> list[str]:
    pred = []
    for _, docs in grouped:
        if any(con >= contradict_at and con >= ent for ent, con in docs):
            pred.append("CONTRADICT")
        elif any(ent >= support_at for ent, _ in docs):
            pred.append("SUPPORT")
        else:
            pred.append("NEI")
    return pred


def _sigmoid(z: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-z))


def _set_calibration(
    directory: Path, params: dict[str, list[float]], thresholds: dict[str, float]
) -> None:
    """Write Platt parameters and decision thresholds into a model's manifest
    (``nli.json``: ``calibration``, ``thresholds``)."""
    path = directory / "nli.json"
    manifest = json.loads(path.read_text())
    manifest["calibration"] = {k: [round(float(v), 6) for v in ab] for k, ab in params.items()}
    manifest["thresholds"] = {k: thresholds[k] for k in ("support", "contradict")}
    path.write_text(json.dumps(manifest, indent=1) + "\n")
