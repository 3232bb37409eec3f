"""Cross-encoder reranker: a sentence-transformers ``CrossEncoder`` by model name or path.

``load_reranker()`` never raises for a missing model: it returns ``(None, reason)`` and the
retrieval stage records ``reranker: none`` with that reason. Loads (and failures) are
cached per process and name, so a broken path is not retried on every query.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from research.providers import usage
from research.providers.base import ProviderError

_lock = threading.Lock()


class RerankerError(ProviderError):
    pass


class Reranker:
    """Scores (query, passage) pairs; higher means more relevant."""

    def __init__(self, model: Any, name: str, batch_size: int = 32) -> None:
        self._model = model
        self.name = name
        self.batch_size = batch_size

    @property
    def label(self) -> str:
        return f"cross-encoder:{self.name}"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        pairs = [(query, text) for text in texts]
        try:
            with usage.measure("reranker", items=len(pairs)), _lock:  # the stage's cost
                values = self._model.predict(
                    pairs, batch_size=self.batch_size, show_progress_bar=False
                )
        except Exception as exc:  # a model that loads but cannot score is a broken model
            raise RerankerError(str(exc), permanent=True, provider=self.label) from exc
        return [float(v) for v in values]


@lru_cache(maxsize=4)
def _load(name: str, max_length: int) -> tuple[Reranker | None, str]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from research.providers.embedder import configure_threads

    configure_threads()
    try:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(name, device="cpu", max_length=max_length)
    except Exception as exc:  # missing path, hub name while offline, corrupt weights
        return None, f"cannot load {name!r}: {type(exc).__name__}: {exc}"[:500]
    return Reranker(model, name), ""


def load_reranker(name: str, max_length: int = 512) -> tuple[Reranker | None, str]:
    """The reranker for ``name`` (model name or local path), or None and why not."""
    if not name.strip():
        return None, "RERANKER_MODEL is not set"
    return _load(name.strip(), max_length)


def load_reranker_from_settings() -> tuple[Reranker | None, str]:
    from django.conf import settings

    return load_reranker(settings.RERANKER_MODEL)
