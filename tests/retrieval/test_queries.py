"""Query-class hooks: adversarial rewrites for counter-evidence and refute pools."""

from __future__ import annotations

from research.pipeline.retrieve.queries import flip_direction, negate, register, variants


def test_it_removes_or_inserts_a_negation():
    assert negate("Aspirin does not reduce stroke risk") == "Aspirin does reduce stroke risk"
    assert negate("Statins are effective") == "Statins are not effective"
    assert negate("Vitamin D cannot prevent fractures") == "Vitamin D can prevent fractures"
    assert negate("Smoking causes cancer") == "no evidence that Smoking causes cancer"


def test_it_flips_direction_words():
    assert (
        flip_direction("TP53 loss increases tumour growth") == "TP53 loss decreases tumour growth"
    )
    assert flip_direction("Lower doses are better") == "Higher doses are better"


def test_it_adds_refute_variants_for_a_claim():
    out = variants("Exercise improves memory", refute=True)
    assert out[0].role == "original" and out[0].pool == "support"
    refute = [v for v in out if v.pool == "refute"]
    assert {v.role for v in refute} == {"negated", "flipped", "limits"}
    assert "Exercise worsens memory" in [v.text for v in refute]


def test_it_runs_the_query_class_hook():
    out = variants("Drug X does not lower blood pressure", "counter-evidence")
    assert [v.pool for v in out] == ["refute", "refute"]
    assert variants("plain question", "definition") == variants("plain question")


def test_it_accepts_registered_hooks_and_dedupes():
    from research.pipeline.retrieve.queries import QueryVariant

    register("test-class", lambda t: [QueryVariant(t.upper(), "shout"), QueryVariant(t, "same")])
    out = variants("abc", "test-class")
    assert [v.role for v in out] == ["original"]  # "ABC" and "abc" are the same query
