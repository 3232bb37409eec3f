"""The entailment family (``nli``): a cross-encoder reads passage windows against the claim.

By default it is the model this repository trains and ships (``weights/nli/``: an int8
ONNX graph, its tokenizer and ``nli.json``, the manifest with the graph's sha256; model
card beside them; ``manage.py train_nli`` rebuilds it). ``settings.NLI_MODEL`` selects
another: a folder holding such a manifest (for instance ``.data/nli-train/base/onnx``,
the model trained without the claim-verification data), or any sentence-transformers
``CrossEncoder`` by local path or cached hub name; ``off`` turns the family off (recorded as *not
configured*). A configured model that is missing or corrupt is an error naming the file,
never a silent fallback: the run shows the family *unavailable*, and PASS needs it.

A passage is read as windows: each sentence and each two adjacent sentences (a finding
often spans two). A window votes ``supports`` when entailment is its most likely label
at or above the manifest's ``support_at``, ``contradicts`` likewise for contradiction
(``contradict_at``); the quote is the window, verbatim. Pairs are scored in batches and
remembered for the run (the same sentence against the same claim is scored once).

For out-of-fold figures on the training claims (``bench_verification --split train``), each
claim is scored by the fold model that never saw it (``NLI_FOLDS_DIR``, written by
``train_nli --stage folds``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from research.pipeline.language.lexicon import is_meaningful_quote
from research.pipeline.language.sentences import split_sentences
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict
from research.providers.base import ProviderError, file_sha256

SHIPPED = Path(__file__).resolve().parent / "weights" / "nli"
MANIFEST = "nli.json"
OFF = "off"
SHIPPED_NAME = "shipped"
# Probability columns every scorer returns, whatever its model's own label order.
CONTRADICTION, ENTAILMENT, NEUTRAL = 0, 1, 2
CACHE_PAIRS = 50_000  # scored (window, claim) pairs remembered per verifier


class NLIUnavailable(ProviderError):
    """No NLI verifier: ``configured`` says whether one was asked for (then it is a
    failure the run must show as "unavailable"), or simply switched off."""

    def __init__(self, message: str, *, configured: bool = True) -> None:
        super().__init__(message, permanent=True, provider="nli")
        self.configured = configured


class Scorer(Protocol):
    name: str
    support_at: float
    contradict_at: float

    def probs(self, pairs: list[tuple[str, str]]) -> NDArray[np.float32]:
        """(premise, hypothesis) pairs -> probabilities (contradiction, entailment, neutral)."""
        ...


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


def _columns(roles: dict[str, int]) -> list[int]:
    return [roles["contradict"], roles["entail"], roles["neutral"]]


class OnnxScorer:
    """A cross-encoder exported by ``train_nli``: ``model.onnx``, ``tokenizer.json`` and
    ``nli.json`` in one folder. Each file is checked before use: missing, unreadable or
    not matching the manifest's sha256 is an :class:`NLIUnavailable` naming the file."""

    def __init__(self, directory: Path, *, threads: int = 0) -> None:
        manifest_path = directory / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            labels = {i: str(name) for i, name in enumerate(manifest["labels"])}
            max_length = int(manifest["max_length"])
        except OSError as exc:
            raise NLIUnavailable(f"{manifest_path} cannot be read: {exc.strerror or exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise NLIUnavailable(f"{manifest_path} is not an NLI manifest ({exc})") from exc
        self.columns = _columns(label_roles(labels))
        for name, key in (("model.onnx", "graph_sha256"), ("tokenizer.json", "tokenizer_sha256")):
            path = directory / name
            if not path.is_file():
                raise NLIUnavailable(f"{path} is missing (the NLI model's {name})")
            expected = manifest.get(key)
            if expected and file_sha256(path) != expected:
                raise NLIUnavailable(
                    f"{path} is corrupt: its sha256 does not match {manifest_path}"
                )
        thresholds = manifest.get("thresholds", {})
        self.support_at = float(thresholds.get("support", 0.5))
        self.contradict_at = float(thresholds.get("contradict", 0.5))
        try:
            self.calibration = {
                kind: (float(a), float(b))
                for kind, (a, b) in manifest.get("calibration", {}).items()
            }
        except (TypeError, ValueError) as exc:
            raise NLIUnavailable(f"{manifest_path} has a malformed calibration ({exc})") from exc
        self.manifest = manifest
        self.name = "nli:shipped" if directory.resolve() == SHIPPED else f"nli:{directory.name}"
        if directory.name == "onnx" and directory.parent.name:
            self.name = f"nli:{directory.parent.name}"
        from research.providers.onnx_runtime import OnnxCrossEncoder

        try:
            self.runner = OnnxCrossEncoder(
                directory / "model.onnx",
                directory / "tokenizer.json",
                max_length,
                threads=threads or _threads(),
            )
        except Exception as exc:  # onnxruntime / tokenizers refuse a damaged file
            raise NLIUnavailable(f"{directory / 'model.onnx'} cannot be loaded: {exc}") from exc

    def probs(self, pairs: list[tuple[str, str]]) -> NDArray[np.float32]:
        if not pairs:
            return np.zeros((0, 3), dtype=np.float32)
        logits = self.runner.logits(pairs)[:, self.columns]
        logits = logits - logits.max(axis=1, keepdims=True)
        out: NDArray[np.float32] = np.exp(logits).astype(np.float32)
        out /= out.sum(axis=1, keepdims=True)
        return out


class CrossEncoderScorer:
    """Any sentence-transformers ``CrossEncoder`` (local path or cached hub name)."""

    support_at = 0.5
    contradict_at = 0.5

    def __init__(self, name_or_path: str, *, batch_size: int = 16) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import CrossEncoder

        try:
            self.model = CrossEncoder(name_or_path, device="cpu", local_files_only=True)
        except Exception as exc:  # missing path, hub name offline, corrupt weights
            raise NLIUnavailable(f"NLI model {name_or_path!r} could not be loaded: {exc}") from exc
        self.columns = _columns(label_roles(dict(self.model.config.id2label)))
        self.batch_size = batch_size
        self.name = f"nli:{os.path.basename(name_or_path.rstrip('/')) or name_or_path}"

    def probs(self, pairs: list[tuple[str, str]]) -> NDArray[np.float32]:
        if not pairs:
            return np.zeros((0, 3), dtype=np.float32)
        out = self.model.predict(
            pairs, apply_softmax=True, batch_size=self.batch_size, show_progress_bar=False
        )
        return np.asarray(out, dtype=np.float32).reshape(len(pairs), -1)[:, self.columns]


def calibrated(scorer: Scorer, kind: str, p: float) -> float:
    """``p`` (a best-window probability) as the scorer's Platt calibration reads it:
    the probability that the passage, read whole, ``support``s (or ``contradict``s) the
    claim; ``p`` itself for a model without calibration."""
    params = getattr(scorer, "calibration", {}).get(kind)
    if params is None or p <= 0.0:
        return p
    a, b = params
    return float(1.0 / (1.0 + np.exp(-(a * np.log(max(p, 1e-6)) + b))))


def _threads() -> int:
    from research.providers.embedder import encoder_threads

    return encoder_threads()


def configured_spec(value: str) -> str | None:
    """A model setting as ``load_scorer`` takes it: None for ``off``, "" for the shipped
    model (``shipped`` or empty), else the folder or cross-encoder name."""
    spec = value.strip()
    if spec.lower() == OFF:
        return None
    return "" if spec.lower() == SHIPPED_NAME else spec


def load_scorer(spec: str = "") -> Scorer:
    """The shipped model (``""``), a folder with an ``nli.json`` manifest, or a
    sentence-transformers cross-encoder by path or hub name (loaded once per process)."""
    if not spec:
        if not (SHIPPED / MANIFEST).is_file():
            raise NLIUnavailable(
                f"{SHIPPED / MANIFEST} is missing: the shipped entailment model is not "
                "installed (reinstall the package, or set NLI_MODEL)"
            )
        spec = str(SHIPPED)
    return _load(spec)


@lru_cache(maxsize=8)
def _load(spec: str) -> Scorer:
    path = Path(spec).expanduser()
    if (path / MANIFEST).is_file() or (path / "model.onnx").is_file():
        return OnnxScorer(path)
    return CrossEncoderScorer(spec)


def windows(item: EvidenceItem) -> list[tuple[int, int]]:
    """Spans of the item's sentences and of each two adjacent ones, verbatim in its text;
    windows too short to mean anything are left out (a passage of one short line is
    read whole)."""
    spans = [(a, b) for a, b in (list(item.sentences) or split_sentences(item.text)) if b > a]
    spans += [(a, d) for (a, _b), (_c, d) in zip(spans, spans[1:], strict=False)]
    kept = [(a, b) for a, b in spans if is_meaningful_quote(item.text[a:b])]
    return kept or [(0, len(item.text))]


class NLIVerifier:
    """One vote per passage: its most entailing or most contradicting window decides."""

    family = "nli"

    def __init__(
        self,
        model: str | Scorer = "",
        *,
        folds: Sequence[Scorer] = (),
        claim_folds: dict[str, int] | None = None,
    ) -> None:
        self.scorer: Scorer = load_scorer(model) if isinstance(model, str) else model
        self.folds = list(folds)
        self.claim_folds = dict(claim_folds or {})
        self.name = self.scorer.name
        self._cache: OrderedDict[tuple[int, str, str], NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self.scored, self.seconds = 0, 0.0  # pairs the model ran on, and how long it took

    def pairs_per_s(self) -> float:
        return self.scored / self.seconds if self.seconds else 0.0

    @classmethod
    def from_settings(cls, *, out_of_fold: bool = False) -> NLIVerifier:
        from django.conf import settings

        spec = configured_spec(str(settings.NLI_MODEL or ""))
        if spec is None:
            raise NLIUnavailable("not configured (NLI_MODEL is off)", configured=False)
        if not out_of_fold or spec:
            # Another model never saw our folds' split: it scores every claim.
            return cls(spec)
        return cls(spec, **_fold_models(Path(settings.NLI_FOLDS_DIR)))

    def scorer_for(self, claim: ClaimInput) -> tuple[int, Scorer]:
        fold = self.claim_folds.get(claim.claim_id)
        if fold is None or fold >= len(self.folds):
            return -1, self.scorer
        return fold, self.folds[fold]

    def probabilities(self, claim: ClaimInput, texts: list[str]) -> NDArray[np.float32]:
        """(contradiction, entailment, neutral) for each text as premise of the claim."""
        fold, scorer = self.scorer_for(claim)
        keys = [(fold, text, claim.text) for text in texts]
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            started = time.perf_counter()
            scored = scorer.probs([(text, hypothesis) for _, text, hypothesis in missing])
            self.scored += len(missing)
            self.seconds += time.perf_counter() - started
            with self._lock:
                for key, row in zip(missing, scored, strict=True):
                    self._cache[key] = row
                while len(self._cache) > CACHE_PAIRS:
                    self._cache.popitem(last=False)
        with self._lock:
            rows = [self._cache.get(k) for k in keys]
        if any(r is None for r in rows):  # evicted meanwhile by a concurrent caller
            return scorer.probs([(text, claim.text) for text in texts])
        return np.stack([r for r in rows if r is not None])

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        spans = [windows(item) for item in items]
        texts = [
            item.text[a:b]
            for item, item_spans in zip(items, spans, strict=True)
            for a, b in item_spans
        ]
        probs = self.probabilities(claim, texts)
        _, scorer = self.scorer_for(claim)
        votes: list[Vote] = []
        cursor = 0
        for item, item_spans in zip(items, spans, strict=True):
            rows = probs[cursor : cursor + len(item_spans)]
            cursor += len(item_spans)
            votes.append(self._vote(claim, item, item_spans, rows, scorer))
        return votes

    def _vote(
        self,
        claim: ClaimInput,
        item: EvidenceItem,
        spans: list[tuple[int, int]],
        probs: NDArray[np.float32],
        scorer: Scorer,
    ) -> Vote:
        top = probs.argmax(axis=1)
        ent = np.where(top == ENTAILMENT, probs[:, ENTAILMENT], 0.0)
        con = np.where(top == CONTRADICTION, probs[:, CONTRADICTION], 0.0)
        i_e, i_c = int(ent.argmax()), int(con.argmax())
        # The decision reads the raw window probability against the manifest's thresholds
        # (chosen out-of-fold for claim macro-F1 within escape and false-FAIL bounds); the
        # score is that probability, and the rationale also gives the calibrated one.
        if con[i_c] > 0 and con[i_c] >= scorer.contradict_at and con[i_c] >= ent[i_e]:
            verdict, score, index = VoteVerdict.CONTRADICTS, float(con[i_c]), i_c
        elif ent[i_e] > 0 and ent[i_e] >= scorer.support_at:
            verdict, score, index = VoteVerdict.SUPPORTS, float(ent[i_e]), i_e
        else:
            index = int(probs[:, ENTAILMENT].argmax())
            verdict, score = VoteVerdict.INSUFFICIENT, float(probs[index, NEUTRAL])
        p_support = calibrated(scorer, "support", float(ent[i_e]))
        p_contradict = calibrated(scorer, "contradict", float(con[i_c]))
        a, b = spans[index]
        needs = scorer.contradict_at if verdict == VoteVerdict.CONTRADICTS else scorer.support_at
        return Vote.bind(
            self.name,
            self.family,
            claim,
            item,
            verdict=verdict,
            score=score,
            quote=item.text[a:b],
            rationale=(
                f"entailment {float(probs[:, ENTAILMENT].max()):.2f}, contradiction "
                f"{float(probs[:, CONTRADICTION].max()):.2f} at best over {len(spans)} "
                f"window(s) (calibrated: support {p_support:.2f}, contradiction "
                f"{p_contradict:.2f}); a vote needs its label most likely and ≥ {needs:.2f}"
            ),
        )


def _fold_models(directory: Path) -> dict[str, Any]:
    """The fold models ``train_nli --stage folds`` wrote, and which claim each held out."""
    index = directory / "claim_folds.json"
    try:
        claim_folds = {str(k): int(v) for k, v in json.loads(index.read_text()).items()}
    except (OSError, ValueError) as exc:
        raise NLIUnavailable(
            f"out-of-fold scoring needs {index} and the fold models beside it: run "
            "`python manage.py train_nli --stage folds` (see weights/nli/MODEL_CARD.md)"
        ) from exc
    folds = [
        load_scorer(str(directory / f"fold{k}" / "onnx"))
        for k in range(max(claim_folds.values()) + 1)
    ]
    return {"folds": folds, "claim_folds": claim_folds}
