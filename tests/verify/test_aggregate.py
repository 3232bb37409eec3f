from __future__ import annotations

from datetime import date

from research.pipeline.verify.aggregate import AggregateConfig, aggregate, independent_count
from research.pipeline.verify.records import ClaimInput, Flag, PoolName, Status

from .helpers import REFUTE_QUOTE, REFUTE_TEXT, SUPPORT_QUOTE, SUPPORT_TEXT, item, vote

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")


def agreed(claim, ev, quote=SUPPORT_QUOTE, **fields):
    """Supports from two judging families (learned and coverage): a quorum of two."""
    return [
        vote(claim, ev, "supports", quote, **fields),
        vote(claim, ev, "supports", quote, family="coverage", verifier="coverage-strict"),
    ]


def test_it_is_unverifiable_without_any_admitted_vote():
    verdict = aggregate(CLAIM, [item("e1", SUPPORT_TEXT)], [])
    assert verdict.status == Status.UNVERIFIABLE
    assert "no judging verifier family gave a valid vote" in verdict.rationale
    assert aggregate(CLAIM, [], []).status == Status.UNVERIFIABLE


def test_it_is_unverifiable_when_every_judging_family_says_it_cannot_be_checked():
    ev = item("e1", SUPPORT_TEXT)
    votes = [
        vote(CLAIM, ev, "unverifiable", ""),
        vote(CLAIM, ev, "insufficient", SUPPORT_QUOTE, family="rules", verifier="rules"),
    ]
    verdict = aggregate(CLAIM, [ev], votes)
    assert verdict.status == Status.UNVERIFIABLE
    assert verdict.relations == {"e1": "insufficient"}


def test_it_fails_nineteen_supports_against_one_credible_contradiction():
    supports = [item(f"s{i}", SUPPORT_TEXT, source_key=f"doi:{i}") for i in range(19)]
    refute = item("r1", REFUTE_TEXT, PoolName.REFUTE)
    votes = [v for s in supports for v in agreed(CLAIM, s)]
    votes.append(vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.8))
    verdict = aggregate(CLAIM, [*supports, refute], votes)
    assert verdict.status == Status.FAIL
    assert verdict.refute_ids == ["r1"]
    assert Flag.CONFLICTING in verdict.flags
    assert "outranks any support" in verdict.rationale
    assert "negation conflict" in verdict.rationale


def test_a_fail_says_from_another_source_only_when_the_claim_has_its_own():
    refute = item("r1", REFUTE_TEXT, PoolName.REFUTE)
    contradiction = vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.8)
    # An audited report's claim has no source it was mined from: no "another" to speak of.
    alone = aggregate(CLAIM, [refute], [contradiction])
    assert alone.status == Status.FAIL
    assert alone.rationale.startswith("FAIL: 1 passage(s) credibly contradict the claim")
    own = item("a1", SUPPORT_TEXT, source_key="doi:own", anchor=True)
    mined = aggregate(CLAIM, [own, refute], [contradiction])
    assert mined.status == Status.FAIL
    assert mined.rationale.startswith("FAIL: 1 passage(s) from another source credibly")


def test_it_passes_when_two_families_agree_and_says_why_with_the_quote():
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(CLAIM, [ev], agreed(CLAIM, ev))
    assert verdict.status == Status.PASS
    assert verdict.quotes == {"e1": SUPPORT_QUOTE}
    assert SUPPORT_QUOTE in verdict.rationale
    assert "coverage, learned" in verdict.rationale
    assert Flag.SINGLE_SOURCE not in verdict.flags  # only claims that need corroboration


def test_it_does_not_pass_when_one_family_supports_and_another_abstains():
    ev = item("e1", SUPPORT_TEXT)
    votes = [
        vote(CLAIM, ev, "supports", SUPPORT_QUOTE),
        vote(CLAIM, ev, "insufficient", "", family="coverage", verifier="coverage-strict"),
    ]
    verdict = aggregate(CLAIM, [ev], votes)
    assert verdict.status == Status.UNCERTAIN
    assert "not corroborated by coverage" in verdict.rationale


def test_it_does_not_pass_on_one_family_however_sure_when_the_quorum_is_two():
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(CLAIM, [ev], [vote(CLAIM, ev, "supports", SUPPORT_QUOTE, score=0.99)])
    assert verdict.status == Status.UNCERTAIN
    assert "PASS needs 2 distinct verifier families" in verdict.rationale
    one = aggregate(
        CLAIM, [ev], [vote(CLAIM, ev, "supports", SUPPORT_QUOTE)], config=AggregateConfig(quorum=1)
    )
    assert one.status == Status.PASS


def test_it_does_not_pass_when_a_configured_family_was_unavailable():
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(CLAIM, [ev], agreed(CLAIM, ev), unavailable={"llm-a": "HTTP 500"})
    assert verdict.status == Status.UNCERTAIN
    assert "llm-a (HTTP 500)" in verdict.rationale
    assert Flag.FAMILY_UNAVAILABLE in verdict.flags


def test_it_never_passes_on_lexical_rules_and_one_family():
    ev = item("e1", SUPPORT_TEXT)
    votes = [
        vote(CLAIM, ev, "supports", SUPPORT_QUOTE, family="rules", verifier="rules"),
        vote(CLAIM, ev, "supports", SUPPORT_QUOTE),
    ]
    assert aggregate(CLAIM, [ev], votes).status == Status.UNCERTAIN


def test_it_never_lets_a_shadow_family_change_the_verdict():
    ev = item("e1", SUPPORT_TEXT)
    refute = item("r1", REFUTE_TEXT, PoolName.REFUTE)
    shadow_support = vote(CLAIM, ev, "supports", SUPPORT_QUOTE, family="nli", shadow=True)
    one = [vote(CLAIM, ev, "supports", SUPPORT_QUOTE)]
    verdict = aggregate(CLAIM, [ev], [*one, shadow_support])
    assert verdict.status == Status.UNCERTAIN  # the shadow support would have made a quorum
    assert verdict.shadow_status == Status.PASS
    shadow_refute = vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, family="nli", shadow=True)
    verdict = aggregate(CLAIM, [ev, refute], [*agreed(CLAIM, ev), shadow_refute])
    assert verdict.status == Status.PASS
    assert verdict.shadow_status == Status.FAIL
    assert verdict.votes[-1].shadow


def test_it_holds_a_numerical_claim_whose_number_the_evidence_does_not_state():
    claim = ClaimInput("c1", "A 500 mg aspirin dose reduced fever in adults.", "numerical")
    ev = item("e1", SUPPORT_TEXT)
    verdict = aggregate(claim, [ev], agreed(claim, ev))
    assert verdict.status == Status.UNCERTAIN
    assert "500 mg" in verdict.rationale


def test_it_holds_a_causal_claim_supported_only_by_association():
    claim = ClaimInput("c1", "Coffee causes longevity.", claim_type="causal")
    text = "Cohort. Coffee drinking was associated with longer life in a cohort of adults."
    quote = "Coffee drinking was associated with longer life in a cohort of adults."
    ev = item("e1", text)
    verdict = aggregate(claim, [ev], agreed(claim, ev, quote))
    assert verdict.status == Status.UNCERTAIN
    assert "more than correlation" in verdict.rationale


def test_it_holds_a_current_state_claim_without_a_recent_snapshot():
    claim = ClaimInput("c1", "Model X currently leads the benchmark.", claim_type="current-state")
    text = "News. Model X currently leads the reading benchmark by two points."
    quote = "Model X currently leads the reading benchmark by two points."
    old = item("e1", text, fetched_at="2019-05-01T00:00:00+00:00")
    config = AggregateConfig(as_of=date(2026, 1, 1))
    verdict = aggregate(claim, [old], agreed(claim, old, quote), config=config)
    assert verdict.status == Status.UNCERTAIN
    fresh = item("e1", text, fetched_at="2025-12-01T00:00:00+00:00")
    verdict = aggregate(claim, [fresh], agreed(claim, fresh, quote), config=config)
    assert verdict.status == Status.PASS


def test_it_holds_a_comparative_claim_without_evidence_on_both_sides():
    claim = ClaimInput(
        "c1", "Hybrid retrieval beats sparse retrieval than keyword lookup.", "comparative"
    )
    text = "Results. Hybrid retrieval gave strong results on technical questions overall."
    quote = "Hybrid retrieval gave strong results on technical questions overall."
    ev = item("e1", text)
    verdict = aggregate(claim, [ev], agreed(claim, ev, quote))
    assert verdict.status == Status.UNCERTAIN
    assert "both sides" in verdict.rationale


def test_it_requires_independent_sources_when_triangulation_is_needed():
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.", needs_triangulation=True)
    copies = [
        item("e1", SUPPORT_TEXT, source_key="url:a", cluster="story-1"),
        item("e2", SUPPORT_TEXT, source_key="url:b", cluster="story-1"),
    ]
    votes = [v for c in copies for v in agreed(claim, c)]
    verdict = aggregate(claim, copies, votes)
    assert verdict.status == Status.UNCERTAIN
    assert verdict.independent_sources == 1


def test_it_does_not_count_a_quote_that_states_an_aim_or_background_as_support():
    claim = ClaimInput(
        "c1",
        "An increase in the recommended intake of vitamin D is warranted.",
        needs_triangulation=True,
    )
    finding = "An increase in the currently recommended intake of vitamin D is warranted."
    aim = (
        "BACKGROUND Knowledge gaps have contributed to variation among dietary recommendations "
        "for vitamin D. OBJECTIVE We aimed to establish the intake of vitamin D required to "
        "maintain serum concentrations above proposed cutoffs."
    )
    own = item("e1", finding, source_key="doi:1")
    other = item("e2", aim, source_key="doi:2")
    votes = [*agreed(claim, own, finding), *agreed(claim, other, aim)]

    verdict = aggregate(claim, [own, other], votes)

    # the second source only says what its study set out to find: no corroboration
    assert verdict.status == Status.UNCERTAIN
    assert verdict.independent_sources == 1
    assert "needs 2 independent sources" in verdict.rationale
    assert "Not counted: 2 support vote(s) because its quote states background" in (
        verdict.rationale
    )
    # a finding in that source corroborates as before
    found = item("e3", aim + " Intakes above 1000 IU per day were warranted.", source_key="doi:2")
    quote = "Intakes above 1000 IU per day were warranted."
    votes = [*agreed(claim, own, finding), *agreed(claim, found, quote)]
    assert aggregate(claim, [own, found], votes).independent_sources == 2


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
        *agreed(CLAIM, ev),
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


def test_it_flags_safety_sensitive_and_high_impact_claims_only_when_they_pass():
    claim = ClaimInput("c1", "The dosage for children reduces fever in adults.", high_impact=True)
    assert aggregate(claim, [], []).flags == []  # UNVERIFIABLE is reviewed anyway
    ev = item("e1", "Trial. The dosage for children reduces fever in adults quickly.")
    quote = "The dosage for children reduces fever in adults quickly."
    verdict = aggregate(claim, [ev], agreed(claim, ev, quote))
    assert verdict.status == Status.PASS
    assert {Flag.SAFETY, Flag.HIGH_IMPACT, Flag.SINGLE_SOURCE} <= set(verdict.flags)


def test_it_never_fails_a_claim_on_its_own_anchor_passage():
    claim = ClaimInput("c1", SUPPORT_QUOTE)
    text = SUPPORT_TEXT + " " + REFUTE_QUOTE
    anchor = item("a1", text, cited_quote=SUPPORT_QUOTE, anchor=True)
    other_chunk = item("p1", "Background. " + text, PoolName.REFUTE, source_key="src:a1")
    votes = [
        vote(claim, anchor, "contradicts", REFUTE_QUOTE, score=0.9),
        vote(claim, other_chunk, "contradicts", REFUTE_QUOTE, score=0.9),
    ]
    verdict = aggregate(claim, [anchor, other_chunk], votes)
    assert verdict.status != Status.FAIL
    # Its own source never counts against it (issue 26): set aside, said, not flagged.
    assert Flag.POSSIBLE_CONTRADICTION not in verdict.flags
    assert verdict.relations == {"a1": "insufficient", "p1": "insufficient"}
    assert "the claim's own source" in verdict.rationale
    # Re-verifying a reviewer's wording keeps it a possible contradiction.
    kept = aggregate(
        claim, [anchor, other_chunk], votes, config=AggregateConfig(own_source_contradicts=True)
    )
    assert kept.status == Status.UNCERTAIN
    assert Flag.POSSIBLE_CONTRADICTION in kept.flags
    assert kept.relations == {"a1": "possible-contradiction", "p1": "possible-contradiction"}


def test_each_part_of_the_rationale_ends_before_the_next_begins():
    """A rationale that ends on a quote without its own full stop ran into the next part:
    '… compared with placebo" Not counted: …'."""
    anchor = item("a1", REFUTE_TEXT, anchor=True, source_key="doi:own")
    other = item("e1", SUPPORT_TEXT, source_key="doi:other")
    clause = "aspirin significantly reduced fever compared with placebo"
    assert clause in SUPPORT_TEXT
    votes = [vote(CLAIM, anchor, "contradicts", REFUTE_QUOTE), *agreed(CLAIM, other, clause)]
    verdict = aggregate(CLAIM, [anchor, other], votes)
    assert verdict.status == Status.PASS
    assert f'{clause}". Not counted: 1 contradiction vote(s)' in verdict.rationale


def test_it_passes_on_other_sources_when_only_its_own_source_contradicts():
    """Issue 26: the claim's own source counted as a possible contradiction kept it
    UNCERTAIN although two families supported it on another source."""
    anchor = item("a1", REFUTE_TEXT, anchor=True, source_key="doi:own")
    other = item("e1", SUPPORT_TEXT, source_key="doi:other")
    votes = [vote(CLAIM, anchor, "contradicts", REFUTE_QUOTE, score=0.9), *agreed(CLAIM, other)]
    verdict = aggregate(CLAIM, [anchor, other], votes)
    assert verdict.status == Status.PASS
    assert verdict.possible_contradictions == {}
    assert verdict.relations == {"a1": "insufficient", "e1": "supports"}
    assert "Not counted: 1 contradiction vote(s) because it is the claim's own source" in (
        verdict.rationale
    )


def test_it_sets_aside_a_contradiction_on_a_passage_another_family_finds_stating_the_claim():
    ev = item("e1", SUPPORT_TEXT, source_key="doi:7")
    votes = [
        vote(CLAIM, ev, "contradicts", SUPPORT_QUOTE, score=0.9),
        vote(CLAIM, ev, "supports", SUPPORT_QUOTE, family="coverage", verifier="coverage-strict"),
    ]
    verdict = aggregate(CLAIM, [ev], votes)
    assert verdict.status == Status.UNCERTAIN
    assert verdict.relations == {"e1": "supports"}
    assert "the same passage states the claim" in verdict.rationale


def test_it_fails_only_with_an_explicit_conflict_at_a_credible_confidence():
    support = item("e1", SUPPORT_TEXT)
    text = "Replication. In a second randomized trial of 900 adults, aspirin lowered fever."
    quote = "In a second randomized trial of 900 adults, aspirin lowered fever."
    agreeing = item("r1", text, PoolName.REFUTE)
    verdict = aggregate(
        CLAIM, [support, agreeing], [vote(CLAIM, agreeing, "contradicts", quote, score=0.9)]
    )
    assert verdict.status == Status.UNCERTAIN  # no negation, direction, number or antonym
    assert "no explicit conflict" in verdict.rationale
    refute = item("r2", REFUTE_TEXT, PoolName.REFUTE)
    weak = aggregate(CLAIM, [refute], [vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.4)])
    assert weak.status == Status.UNCERTAIN
    assert weak.relations == {"r2": "possible-contradiction"}
    assert "confidence 0.40 is below the credible level 0.50" in weak.rationale
    strong = aggregate(
        CLAIM, [refute], [vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.7)]
    )
    assert strong.status == Status.FAIL


def test_it_never_fails_on_a_quote_that_states_a_study_s_aim_and_shows_it_as_possible():
    claim = ClaimInput("c1", "Risedronate does not reduce the risk of vertebral fractures.")
    aim = (
        "OBJECTIVE To test the efficacy of daily risedronate to reduce the risk of vertebral "
        "fractures in postmenopausal women."
    )
    ev = item("r1", aim, PoolName.REFUTE)
    votes = [
        vote(claim, ev, "contradicts", aim, score=0.9),
        vote(claim, ev, "contradicts", aim, family="rules", verifier="rules", score=0.7),
    ]

    verdict = aggregate(claim, [ev], votes)

    # "To test whether it reduces" is no finding that it does: the reviewer sees the passage
    assert verdict.status == Status.UNCERTAIN
    assert verdict.relations == {"r1": "possible-contradiction"}
    assert Flag.POSSIBLE_CONTRADICTION in verdict.flags
    assert "its quote states the study's aim, not a finding" in verdict.rationale


def test_it_does_not_count_a_contradiction_quoting_a_sentence_about_something_else():
    off = "Data sources included a national survey of household income and diet."
    other = item("o1", f"Methods. {off}", PoolName.REFUTE)
    support = item("e1", SUPPORT_TEXT)
    votes = [*agreed(CLAIM, support), vote(CLAIM, other, "contradicts", off, score=0.9)]
    verdict = aggregate(CLAIM, [support, other], votes)
    assert verdict.status == Status.PASS
    assert verdict.refute_ids == []
    assert Flag.POSSIBLE_CONTRADICTION not in verdict.flags
    assert "less than 50% of the claim's content words" in verdict.rationale
    on_topic = [vote(CLAIM, other, "contradicts", REFUTE_QUOTE, score=0.9)]
    assert aggregate(CLAIM, [support, other], votes[:2] + on_topic).status == Status.FAIL


def test_it_needs_the_claims_subject_and_outcome_in_a_contradiction():
    claim = ClaimInput("c1", "Vitamin D supplements reduce falls in older adults.")
    quote = "Vitamin D supplements did not reduce mortality in this older cohort."
    ev = item("r1", f"Trial. {quote}", PoolName.REFUTE)
    verdict = aggregate(claim, [ev], [vote(claim, ev, "contradicts", quote, score=0.9)])
    assert verdict.status == Status.UNCERTAIN
    assert "subject and its outcome" in verdict.rationale


def test_it_does_not_fail_on_a_lexical_check_alone():
    refute = item("r1", REFUTE_TEXT, PoolName.REFUTE)
    rules = vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, family="rules", verifier="rules")
    verdict = aggregate(CLAIM, [refute], [rules])
    assert verdict.status != Status.FAIL
    assert "a lexical check alone" in verdict.rationale
    learned = vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.6)
    assert aggregate(CLAIM, [refute], [rules, learned]).status == Status.FAIL


def test_it_fails_when_two_families_find_the_same_explicit_conflict():
    refute = item("r1", REFUTE_TEXT, PoolName.REFUTE)
    rules = vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, family="rules", verifier="rules")
    unsure = vote(CLAIM, refute, "contradicts", REFUTE_QUOTE, score=0.3)
    # Each alone is only a possible contradiction: a lexical check, a low confidence.
    for alone in ([rules], [unsure]):
        assert aggregate(CLAIM, [refute], alone).status != Status.FAIL
    both = aggregate(CLAIM, [refute], [rules, unsure])
    assert both.status == Status.FAIL
    assert both.relations == {"r1": "contradicts"}
    assert "negation conflict" in both.rationale
    strict = AggregateConfig(corroborated_contradictions=False)
    held = aggregate(CLAIM, [refute], [rules, unsure], config=strict)
    assert held.status == Status.UNCERTAIN
    assert Flag.POSSIBLE_CONTRADICTION in held.flags
    # Agreement never makes the claim's own source a contradiction.
    anchor = item("a1", REFUTE_TEXT, anchor=True)
    on_anchor = [
        vote(CLAIM, anchor, "contradicts", REFUTE_QUOTE, family="rules", verifier="rules"),
        vote(CLAIM, anchor, "contradicts", REFUTE_QUOTE, score=0.3),
    ]
    assert aggregate(CLAIM, [anchor], on_anchor).status != Status.FAIL


def test_it_does_not_fail_a_claim_about_another_group():
    claim = ClaimInput("c1", "Aspirin reduces fever in adults without diabetes.")
    quote = "Aspirin did not reduce fever in adults with diabetes."
    ev = item("r1", f"Subgroup. {quote}", PoolName.REFUTE)
    verdict = aggregate(claim, [ev], [vote(claim, ev, "contradicts", quote, score=0.9)])
    assert verdict.status == Status.UNCERTAIN
    assert "another group" in verdict.rationale
