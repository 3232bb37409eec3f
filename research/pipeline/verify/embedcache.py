"""A disk cache of sentence embeddings keyed by sha256 of the text (CPU is scarce).

Used by the training and benchmark commands so that the corpus is encoded once per
model; production verification encodes through the same :class:`EmbeddingCache` with
``path=None`` (memory only, bounded by ``max_entries``), one per verify stage, so the
sentences of an abstract judged for many claims of a run are encoded once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from research.pipeline.text import sha256_hex

if TYPE_CHECKING:
    from numpy.typing import NDArray

Encoder = Callable[[list[str]], "NDArray[np.float32]"]


class EmbeddingCache:
    """``encode(texts)`` returns normalized vectors, encoding only texts not seen before."""

    def __init__(
        self,
        encoder: Encoder,
        path: Path | None = None,
        dim: int = 384,
        *,
        max_entries: int | None = None,
    ) -> None:
        self.encoder = encoder
        self.path = path
        self.dim = dim
        self.max_entries = max_entries  # memory-only caches start over past this many
        self._index: dict[str, int] = {}
        self._rows: list[NDArray[np.float32]] = []
        self._dirty = False
        if path is not None and (path / "keys.json").exists():
            keys = json.loads((path / "keys.json").read_text())
            matrix = np.load(path / "vectors.npy")
            self._index = {k: i for i, k in enumerate(keys)}
            self._rows = [matrix]

    def _matrix(self) -> NDArray[np.float32]:
        if len(self._rows) != 1:
            rows = [r for r in self._rows if len(r)]
            self._rows = [np.concatenate(rows) if rows else np.zeros((0, self.dim), np.float32)]
        return self._rows[0]

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        keys = [sha256_hex(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._index))
        if (
            missing
            and self.path is None
            and self.max_entries is not None
            and len(self._index) + len(missing) > self.max_entries
        ):
            self._index, self._rows = {}, []
            missing = list(dict.fromkeys(keys))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            vectors = np.asarray(self.encoder([by_key[k] for k in missing]), dtype=np.float32)
            base = len(self._index)
            for offset, key in enumerate(missing):
                self._index[key] = base + offset
            self._rows.append(vectors)
            self._dirty = True
        matrix = self._matrix()
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return matrix[[self._index[k] for k in keys]]

    def save(self) -> None:
        if self.path is None or not self._dirty:
            return
        self.path.mkdir(parents=True, exist_ok=True)
        matrix = self._matrix()
        keys = sorted(self._index, key=self._index.__getitem__)
        np.save(self.path / "vectors.npy", matrix)
        (self.path / "keys.json").write_text(json.dumps(keys))
        self._dirty = False
