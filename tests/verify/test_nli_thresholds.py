"""The NLI family's decision thresholds: chosen for claim macro-F1 within the escape bound."""

from __future__ import annotations

from research.bench.nli_recipe import MAX_ESCAPE, choose_thresholds, claim_decisions


def test_a_claim_fails_on_a_contradiction_that_beats_its_entailment_else_passes_on_support():
    rows = [(1, "SUPPORT", 0.95, 0.1), (1, "NEI", 0.2, 0.1), (2, "CONTRADICT", 0.6, 0.9)]
    labels = {1: "SUPPORT", 2: "CONTRADICT"}
    gold, pred = claim_decisions(rows, labels, support_at=0.9, contradict_at=0.8)
    assert gold == ["SUPPORT", "CONTRADICT"] and pred == ["SUPPORT", "CONTRADICT"]
    _, lower = claim_decisions(rows, labels, support_at=0.5, contradict_at=0.95)
    assert lower == ["SUPPORT", "SUPPORT"]  # the contradiction below its threshold escapes


def test_it_raises_the_support_threshold_until_contradicted_claims_stop_passing():
    # Gold CONTRADICT claims read as entailment up to 0.8: any support threshold at or
    # below 0.8 lets them PASS (escape 1.0), so the choice must sit above it.
    rows = [(i, "CONTRADICT", 0.8, 0.1) for i in range(10)]
    rows += [(100 + i, "SUPPORT", 0.86 + 0.01 * (i % 10), 0.1) for i in range(20)]
    rows += [(200 + i, "NEI", 0.3, 0.1) for i in range(10)]
    labels = {claim_id: label for claim_id, label, _, _ in rows}
    chosen = choose_thresholds(rows, labels)
    assert chosen["support"] > 0.8
    gold, pred = claim_decisions(rows, labels, chosen["support"], chosen["contradict"])
    escaped = sum(g == "CONTRADICT" and p == "SUPPORT" for g, p in zip(gold, pred, strict=True))
    assert escaped / gold.count("CONTRADICT") <= MAX_ESCAPE
    assert pred.count("SUPPORT") >= 10  # and it still passes the clear support
