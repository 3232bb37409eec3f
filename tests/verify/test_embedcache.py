from __future__ import annotations

import numpy as np

from research.pipeline.verify.embedcache import EmbeddingCache


class CountingEncoder:
    """A deterministic stand-in encoder that records what it was asked to encode."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return np.asarray([[float(len(t)), float(t.count("a")), 1.0] for t in texts], np.float32)


def test_it_encodes_each_sentence_once_and_returns_rows_in_request_order():
    encoder = CountingEncoder()
    cache = EmbeddingCache(encoder, dim=3)
    first = cache.encode(["alpha", "beta"])
    again = cache.encode(["beta", "gamma", "alpha", "beta"])
    assert encoder.seen == ["alpha", "beta", "gamma"]
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[2], first[0])
    np.testing.assert_array_equal(again, encoder(["beta", "gamma", "alpha", "beta"]))


def test_a_memory_cache_starts_over_past_its_bound_and_stays_correct():
    encoder = CountingEncoder()
    cache = EmbeddingCache(encoder, dim=3, max_entries=3)
    cache.encode(["a", "bb", "ccc"])
    rows = cache.encode(["ccc", "dddd"])
    assert encoder.seen == ["a", "bb", "ccc", "ccc", "dddd"]
    calls = len(encoder.seen)
    cache.encode(["dddd"])
    assert len(encoder.seen) == calls  # still cached after starting over
    np.testing.assert_array_equal(rows, encoder(["ccc", "dddd"]))
