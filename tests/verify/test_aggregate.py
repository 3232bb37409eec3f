from __future__ import annotations

from datetime import date

from research.pipeline.verify.aggregate import AggregateConfig, aggregate, independent_count
from research.pipeline.verify.records import ClaimInput, Flag, PoolName, Status

from .helpers import REFUTE_QUOTE, REFUTE_TEXT, SUPPORT_QUOTE, SUPPORT_TEXT, item, vote

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")


def test_it_is_uncertain_without_any_admitted_vote():
    verdict = aggregate(CLAIM, [item("e1", SUPPORT_TEXT)], [])
    assert verdict.status == Status.UNCERTAIN
    assert "no admitted verifier vote" in verdict.rationale


def test_it_fails_nineteen_supports_against_one_credible_contradiction():
    supports = [item(f"s{i}", SUPPORT_TEXT, source_key=f"doi:{i}") for i in range(19)]
    refute = item("r1", REFUTE_TEXT, PoolName.REFUTE)
    votes = [vote(CLAIM, s, "supports", SUPPORT_QUOTE) for s in supports]
    votes.append(vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.8))
    verdict = aggregate(CLAIM, [*supports, refute], votes)
    assert verdict.status == Status.FAIL
    assert verdict.refute_ids == ["r1"]
    assert Flag.CONFLICTING in verdict.flags
    assert "outranks any support" in verdict.rationale


def test_it_passes_direct_support_and_says_why_with_the_quote():
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(CLAIM, [ev], [vote(CLAIM, ev, "supports", SUPPORT_QUOTE)])
    assert verdict.status == Status.PASS
    assert verdict.quotes == {"e1": SUPPORT_QUOTE}
    assert SUPPORT_QUOTE in verdict.rationale
    assert Flag.SINGLE_SOURCE in verdict.flags
    assert Flag.NO_REFUTE_POOL in verdict.flags


def test_it_never_passes_on_lexical_rules_alone():
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(CLAIM, [ev], [vote(CLAIM, ev, "supports", SUPPORT_QUOTE, family="rules")])
    assert verdict.status == Status.UNCERTAIN
    assert "no semantic verifier" in verdict.rationale


def test_it_holds_a_numerical_claim_whose_number_the_evidence_does_not_state():
    claim = ClaimInput("c1", "A 500 mg aspirin dose reduced fever in adults.", "numerical")
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(claim, [ev], [vote(claim, ev, "supports", SUPPORT_QUOTE)])
    assert verdict.status == Status.UNCERTAIN
    assert "500 mg" in verdict.rationale


def test_it_holds_a_causal_claim_supported_only_by_association():
    claim = ClaimInput("c1", "Coffee causes longevity.", claim_type="causal")
    text = "Cohort. Coffee drinking was associated with longer life in a cohort of adults."
    quote = "Coffee drinking was associated with longer life in a cohort of adults."
    ev = item("e1", text)
    verdict = aggregate(claim, [ev], [vote(claim, ev, "supports", quote)])
    assert verdict.status == Status.UNCERTAIN
    assert "more than correlation" in verdict.rationale


def test_it_holds_a_current_state_claim_without_a_recent_snapshot():
    claim = ClaimInput("c1", "Model X currently leads the benchmark.", claim_type="current-state")
    text = "News. Model X currently leads the reading benchmark by two points."
    quote = "Model X currently leads the reading benchmark by two points."
    old = item("e1", text, fetched_at="2019-05-01T00:00:00+00:00")
    config = AggregateConfig(as_of=date(2026, 1, 1))
    verdict = aggregate(claim, [old], [vote(claim, old, "supports", quote)], config=config)
    assert verdict.status == Status.UNCERTAIN
    fresh = item("e1", text, fetched_at="2025-12-01T00:00:00+00:00")
    verdict = aggregate(claim, [fresh], [vote(claim, fresh, "supports", quote)], config=config)
    assert verdict.status == Status.PASS


def test_it_holds_a_comparative_claim_without_evidence_on_both_sides():
    claim = ClaimInput(
        "c1", "Hybrid retrieval beats sparse retrieval than keyword lookup.", "comparative"
    )
    text = "Results. Hybrid retrieval gave strong results on technical questions overall."
    quote = "Hybrid retrieval gave strong results on technical questions overall."
    ev = item("e1", text)
    verdict = aggregate(claim, [ev], [vote(claim, ev, "supports", quote)])
    assert verdict.status == Status.UNCERTAIN
    assert "both sides" in verdict.rationale


def test_it_requires_independent_sources_when_triangulation_is_needed():
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.", needs_triangulation=True)
    copies = [
        item("e1", SUPPORT_TEXT, source_key="url:a", cluster="story-1"),
        item("e2", SUPPORT_TEXT, source_key="url:b", cluster="story-1"),
    ]
    votes = [vote(claim, c, "supports", SUPPORT_QUOTE) for c in copies]
    verdict = aggregate(claim, copies, votes)
    assert verdict.status == Status.UNCERTAIN
    assert verdict.independent_sources == 1


def test_it_counts_independence_by_cluster_and_publisher_not_passages():
    items = [
        item("a", SUPPORT_TEXT, source_key="doi:1", cluster="c1"),
        item("b", SUPPORT_TEXT, source_key="doi:2", cluster="c1"),
        item("c", SUPPORT_TEXT, source_key="doi:3", publisher="Acme News"),
        item("d", SUPPORT_TEXT, source_key="doi:4", publisher="acme news "),
        item("e", SUPPORT_TEXT, source_key="doi:5"),
    ]
    assert independent_count(items) == 3


def test_it_blocks_support_from_evidence_a_rule_found_overstated():
    ev = item("e1", SUPPORT_TEXT)
    votes = [
        vote(CLAIM, ev, "supports", SUPPORT_QUOTE),
        vote(
            CLAIM,
            ev,
            "insufficient",
            SUPPORT_QUOTE,
            family="rules",
            verifier="rules",
            flags=(Flag.OVERSTATEMENT.value,),
        ),
    ]
    verdict = aggregate(CLAIM, [ev], votes)
    assert verdict.status == Status.UNCERTAIN
    assert Flag.OVERSTATEMENT in verdict.flags


def test_it_flags_safety_sensitive_and_high_impact_claims():
    claim = ClaimInput("c1", "The dosage for children is 5 mg.", high_impact=True)
    verdict = aggregate(claim, [], [])
    assert {Flag.SAFETY, Flag.HIGH_IMPACT, Flag.UNCERTAIN} <= set(verdict.flags)


def test_it_sets_aside_a_contradiction_that_quotes_the_claims_own_source_sentence():
    claim = ClaimInput("c1", SUPPORT_QUOTE)
    anchor = item("a1", SUPPORT_TEXT, cited_quote=SUPPORT_QUOTE)
    parent = item("p1", "Background. " + SUPPORT_TEXT, PoolName.REFUTE, source_key="src:a1")
    votes = [
        vote(claim, anchor, "supports", SUPPORT_QUOTE),
        vote(claim, parent, "contradicts", SUPPORT_QUOTE, score=0.45),
    ]
    verdict = aggregate(claim, [anchor, parent], votes)
    assert verdict.status == Status.PASS
    assert "Not counted: 1 contradiction vote(s) that quote the sentence" in verdict.rationale


def test_it_keeps_a_self_quoted_contradiction_when_the_claim_lost_a_negation():
    claim = ClaimInput("c1", "In a second randomized trial of 900 adults, aspirin reduced fever.")
    anchor = item("a1", REFUTE_TEXT, cited_quote=REFUTE_QUOTE)
    votes = [vote(claim, anchor, "contradicts", REFUTE_QUOTE, score=0.45)]
    verdict = aggregate(claim, [anchor], votes)
    assert verdict.status == Status.FAIL
    assert "Not counted" not in verdict.rationale


def test_it_still_fails_on_another_sentence_of_the_source_that_contradicts():
    claim = ClaimInput("c1", SUPPORT_QUOTE)
    text = SUPPORT_TEXT + " " + REFUTE_QUOTE
    anchor = item("a1", text, cited_quote=SUPPORT_QUOTE)
    votes = [
        vote(claim, anchor, "contradicts", SUPPORT_QUOTE, score=0.45),
        vote(claim, anchor, "contradicts", REFUTE_QUOTE, verifier="other", score=0.7),
    ]
    verdict = aggregate(claim, [anchor], votes)
    assert verdict.status == Status.FAIL
    assert verdict.quotes["a1"] == REFUTE_QUOTE


def test_it_does_not_count_a_contradiction_quoting_a_sentence_about_something_else():
    off = "Data sources included a national survey of household income and diet."
    other = item("o1", f"Methods. {off}", PoolName.REFUTE)
    support = item("e1", SUPPORT_TEXT)
    votes = [
        vote(CLAIM, support, "supports", SUPPORT_QUOTE),
        vote(CLAIM, other, "contradicts", off, score=0.4),
    ]
    verdict = aggregate(CLAIM, [support, other], votes)
    assert verdict.status == Status.PASS
    assert verdict.refute_ids == []
    assert "Not counted: 1 contradiction vote(s) whose quote shares less than 25%" in (
        verdict.rationale
    )
    on_topic = [vote(CLAIM, other, "contradicts", REFUTE_QUOTE, score=0.4)]
    assert aggregate(CLAIM, [support, other], votes[:1] + on_topic).status == Status.FAIL
