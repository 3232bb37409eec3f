"""Run an exported encoder (see ``encoder_export``) with ONNX Runtime on the CPU.

Texts are tokenized by the model's own fast tokenizer (truncated at its
``max_seq_length``, as sentence-transformers does), sorted by token length so each batch
is padded only to its own longest text, and run through the graph in batches of at most
``max_tokens`` tokens (padded rows × width; 0: ``batch_size`` rows); vectors come back
L2-normalized, in input order. No torch import is needed at run time.

Why a token budget: on this 2-core machine, batches of 64 rows ran at half the speed of
batches of ~256 tokens (300 abstracts of the benchmark corpus, int8: 13–17 vs 31–40 texts/s; 834
verification sentences, float32: 44 vs 76–123 texts/s; docs/bench/ingest.md); a batch's
activations stay in the cache instead of streaming through memory. The verify stage's
float32 encoder uses it. Stored passages do not by default (``ENCODER_BATCH_TOKENS=0``):
int8 activations are scaled per batch, so a different batching moves every stored vector
and, with them, which passages retrieval returns first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


class OnnxEncoder:
    """One ONNX Runtime session over an exported encoder, with ``threads`` intra-op threads."""

    def __init__(self, graph: Path, tokenizer: Path, max_seq_length: int, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_seq_length)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Spinning threads burn a core waiting for work: on a shared 2-core machine that
        # core belongs to Postgres or to another process.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self.threads = threads
        self._inputs = {i.name for i in self.session.get_inputs()}

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Tokens per text after truncation (special tokens included)."""
        return [len(e.ids) for e in self.tokenizer.encode_batch([t.strip() for t in texts])]

    def encode(
        self, texts: list[str], batch_size: int = 64, max_tokens: int = 256
    ) -> NDArray[np.float32]:
        encodings = self.tokenizer.encode_batch([text.strip() for text in texts])
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out: NDArray[np.float32] | None = None
        start = 0
        while start < len(order):
            width = len(encodings[order[start]].ids)  # the longest left: sorted descending
            budget = max_tokens // max(width, 1) if max_tokens > 0 else batch_size
            rows = max(1, min(batch_size, budget))
            chunk = order[start : start + rows]
            start += rows
            vectors = self._run([encodings[i] for i in chunk])
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[chunk] = vectors
        if out is None:
            return np.zeros((0, 0), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalized: NDArray[np.float32] = (out / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalized

    def _run(self, encodings: list[Any]) -> NDArray[np.float32]:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        result = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        return np.asarray(result[0], dtype=np.float32)


class OnnxCrossEncoder:
    """A sequence-pair classifier exported to ONNX: (premise, hypothesis) -> logits.

    Pairs are tokenized together (premise truncated first, to ``max_length`` tokens),
    sorted by length and run in batches of at most ``max_tokens`` padded tokens, like
    :class:`OnnxEncoder`; logits come back in input order.
    """

    def __init__(self, graph: Path, tokenizer: Path, max_length: int, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length, strategy="longest_first")
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}

    def logits(
        self, pairs: list[tuple[str, str]], batch_size: int = 64, max_tokens: int = 2048
    ) -> NDArray[np.float32]:
        if not pairs:
            return np.zeros((0, 0), dtype=np.float32)
        encodings = self.tokenizer.encode_batch([(p.strip(), h.strip()) for p, h in pairs])
        order = sorted(range(len(pairs)), key=lambda i: -len(encodings[i].ids))
        out: NDArray[np.float32] | None = None
        start = 0
        while start < len(order):
            width = len(encodings[order[start]].ids)
            rows = max(1, min(batch_size, max_tokens // max(width, 1)))
            chunk = order[start : start + rows]
            start += rows
            batch = [encodings[i] for i in chunk]
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, encoding in enumerate(batch):
                n = len(encoding.ids)
                ids[row, :n] = encoding.ids
                mask[row, :n] = 1
                types[row, :n] = encoding.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            result = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
            logits = np.asarray(result[0], dtype=np.float32)
            if out is None:
                out = np.zeros((len(pairs), logits.shape[1]), dtype=np.float32)
            out[chunk] = logits
        assert out is not None
        return out
