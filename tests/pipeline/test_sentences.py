from __future__ import annotations

import pytest

from research.pipeline.language.sentences import clause_pieces, clause_spans, full_stop


def test_mining_cuts_clauses_at_a_semicolon_a_contrast_and_a_comma_and():
    sentence = (
        "Vitamin D lowered PTH; it raised calcium, but it did not change BMD, "
        "whereas placebo did, and adherence was high."
    )

    pieces, breaks = clause_pieces(sentence)

    assert pieces == [
        "Vitamin D lowered PTH",
        "it raised calcium",
        "it did not change BMD",
        "placebo did",
        "adherence was high.",
    ]
    assert breaks == ["; ", ", but ", ", whereas ", ", and "]
    assert "".join(p + b for p, b in zip(pieces, [*breaks, ""], strict=True)) == sentence


def test_mining_keeps_lists_bare_conjunctions_and_however_whole():
    """A list of nouns ("A, B and C"), a bare "and" and ", however" are no clause breaks for
    mining (quote windows do break at ", however": :func:`clause_spans`)."""
    for sentence in (
        "Fish, eggs and milk supply vitamin D.",
        "Exercise lowered weight and raised mood.",
        "The dose was high, however the effect was small.",
    ):
        assert clause_pieces(sentence) == ([sentence], [])
    text = "The dose was high in every arm, however the effect was small in every arm."
    assert len(clause_spans(text, 0, len(text))) == 2


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        (
            "none of 1 admitted passage(s) states the claim",
            "none of 1 admitted passage(s) states the claim.",
        ),
        ('on evidence e1: "aspirin reduced fever"', 'on evidence e1: "aspirin reduced fever".'),
        ('The source says "about 10% slower."', 'The source says "about 10% slower."'),
        ("It ends \u201cso.\u201d", "It ends \u201cso.\u201d"),
        ('a quote cut at its cap "…"', 'a quote cut at its cap "…"'),
        ("(see the note.)  ", "(see the note.)"),
        ("Done!", "Done!"),
        ("", ""),
    ],
)
def test_full_stop_ends_a_sentence_once(text, ended):
    assert full_stop(text) == ended
