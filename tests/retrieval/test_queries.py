"""Query-class hooks: the extra variants a query class asks retrieval to run."""

from __future__ import annotations

from research.pipeline.retrieve.queries import QueryVariant, register, variants


def test_it_runs_the_query_class_hook():
    out = variants("Drug X does not lower blood pressure", "counter-evidence")
    assert [v.text for v in out] == [
        "Drug X does not lower blood pressure",
        "Drug X does not lower blood pressure limitations failure contradicts",
    ]
    assert variants("plain question", "definition") == variants("plain question")


def test_it_accepts_registered_hooks_and_dedupes():
    register("test-class", lambda t: [QueryVariant(t.upper(), "shout"), QueryVariant(t, "same")])
    out = variants("abc", "test-class")
    assert [v.role for v in out] == ["original"]  # "ABC" and "abc" are the same query
