"""Relevance's fitted weights: the fit learns what separates rationales, its floor keeps as
many rationales as the hand floor did, and a broken weights file is a clear error."""

from __future__ import annotations

import json

import numpy as np
import pytest

from research.bench.relevance_training import (
    PARTS,
    Question,
    fit,
    hand_weights,
    matched_threshold,
    ranking_figures,
)
from research.pipeline.claims.relevance import (
    SHIPPED,
    RelevanceWeights,
    shipped_off_topic,
    shipped_record,
    shipped_weights,
)


def lists(seed: int = 3, n: int = 60) -> list[Question]:
    """Candidate lists where only the fourth part (subject) tells the rationale apart; the
    others are noise, the fifth (context) is the same for every candidate of a list."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        parts = rng.uniform(0.0, 1.0, size=(12, len(PARTS)))
        parts[:, 4] = rng.uniform()
        positive = np.zeros(12, dtype=bool)
        positive[:2] = True
        parts[:2, 3] = rng.uniform(0.7, 1.0, size=2)
        parts[2:, 3] = rng.uniform(0.0, 0.6, size=10)
        out.append(Question(i, parts, positive))
    return out


def test_the_fit_puts_its_weight_on_the_part_that_separates_rationales():
    questions = lists()
    weights = fit(questions)
    assert weights.sum() == pytest.approx(1.0)
    assert (weights >= 0).all()
    assert int(np.argmax(weights)) == PARTS.index("subject")
    held_out = lists(seed=4)
    learned = ranking_figures(held_out, weights)
    hand = ranking_figures(held_out, hand_weights())
    assert learned["mrr"] > hand["mrr"]
    assert learned["hit_at_1"] > 0.9


def test_the_fitted_floor_passes_as_many_rationales_as_the_hand_floor():
    questions = lists()
    weights = fit(questions)
    floor = matched_threshold(questions, weights, hand_floor=0.30)
    parts = np.vstack([q.parts for q in questions])
    positive = np.concatenate([q.positive for q in questions])
    by_hand = (parts[positive] @ hand_weights() >= 0.30).mean()
    fitted = (parts[positive] @ weights >= floor).mean()
    assert fitted == pytest.approx(by_hand, abs=1.0 / positive.sum())


def test_the_shipped_record_is_a_fit_that_beat_the_hand_weights_held_out():
    record = shipped_record()
    assert sum(record["weights"].values()) == pytest.approx(1.0, abs=1e-3)
    assert set(record["weights"]) == set(PARTS)
    assert 0.0 < shipped_off_topic() < 1.0
    assert shipped_weights() != RelevanceWeights()
    held = record["held_out"]
    assert held["learned"]["mrr"] >= held["hand"]["mrr"]
    assert record["data"]["skipped_first"] >= 100  # the benchmark's questions stay out
    assert SHIPPED.parent.joinpath("MODEL_CARD.md").is_file()


def test_a_missing_or_broken_weights_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "relevance.json"
    with pytest.raises(RuntimeError, match="cannot be read"):
        shipped_record(missing)
    missing.write_text(json.dumps({"weights": {"dense_question": 1.0}}), encoding="utf-8")
    with pytest.raises(RuntimeError, match="is not a relevance weights record"):
        shipped_record(missing)
    missing.write_text(
        json.dumps({"weights": {"nonsense": 1.0}, "off_topic": 0.2}), encoding="utf-8"
    )
    with pytest.raises(RuntimeError, match="is not a relevance weights record"):
        shipped_record(missing)


def fake_encode(texts: list[str]) -> np.ndarray:
    """Unit vectors from the words' hashes: texts sharing words point alike."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().split():
            out[i, sum(map(ord, word.strip(".,?"))) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1.0, norms)


def test_library_lists_mark_the_sentences_that_hold_a_gold_quote(tmp_path):
    from research.bench.relevance_training import library_lists

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gc.md").write_text(
        "# Garbage collector notes\n\nThe new collector cut pause times by half. "
        "It was written in 2024. Builds take longer now.\n",
        encoding="utf-8",
    )
    (docs / "other.md").write_text(
        "# Release calendar\n\nReleases ship every October. The team meets weekly.\n",
        encoding="utf-8",
    )
    gold = {"claim": "Pauses halved.", "file": "gc.md", "quote": "cut pause times by half"}
    (tmp_path / "questions.json").write_text(
        json.dumps(
            [
                {
                    "question": "Did the new collector shorten pause times?",
                    "gold": [{**gold, "kind": "finding"}],
                }
            ]
        ),
        encoding="utf-8",
    )
    (question,) = library_lists(tmp_path, docs, fake_encode, distractors=1)
    assert question.parts.shape == (len(question.positive), len(PARTS))
    assert int(question.positive.sum()) == 1
    assert len(question.positive) >= 4  # the gold document's sentences and the distractor's
    best = int(np.argmax(question.parts @ np.array(list(shipped_record()["weights"].values()))))
    assert question.positive[best]
