"""The bottom line's rule: what bears on the question, stances, independent sources,
design weights, the consensus, and sentences whose every number is traceable."""

from __future__ import annotations

import re
from dataclasses import replace

from research.pipeline.answer import (
    AGAINST,
    INSUFFICIENT,
    MIXED,
    NOT_RATED,
    SUPPORTS,
    Finding,
    SourceFacts,
    answer,
)
from research.pipeline.claims.stance import bears_on, read_question

QUESTION = "Does vitamin D supplementation reduce the risk of fractures or falls in older adults?"
TRIAL = (
    "Daily vitamin D3 and calcium supplementation reduced the incidence of hip fractures "
    "by 43 percent."
)
META = "Vitamin D supplementation alone was not associated with a lower risk of hip fracture."
HARM = "Annual high-dose vitamin D supplementation increased falls by 15 percent in women."
CONTEXT = "Vitamin D deficiency is common in elderly people who are not exposed to sunlight."


def finding(code, text, direction, *, source, design="rct", cluster="", sub="s1", **fields):
    return Finding(
        code=code,
        text=text,
        subquestion=sub,
        direction=direction,
        sources=(SourceFacts(source, cluster, design),),
        **fields,
    )


FINDINGS = [
    finding("a", TRIAL, "decreases", source="trial", effect="by 43 percent"),
    finding("b", META, "not associated", source="meta", design="meta-analysis"),
    finding("c", HARM, "increases", source="harm", effect="by 15 percent", sub="s2"),
    finding("d", CONTEXT, "", source="review", design="narrative-review", sub="s2"),
]
SUBQUESTIONS = [("s1", "What do trials report?"), ("s2", "What contradicts it?"), ("s3", "Doses?")]


def numbers(text):
    return re.findall(r"\d+(?:\.\d+)?", text)


def test_it_reads_the_intervention_and_outcome_of_an_effect_question():
    question = read_question(QUESTION)
    assert (question.subject, question.outcome, question.asked) == (
        "vitamin D supplementation",
        "the risk of fractures or falls",
        -1,
    )
    assert bears_on(TRIAL, question) and bears_on(HARM, question)
    # Deficiency is an exposure, not the intervention; "risk" alone is not the outcome.
    assert not bears_on(CONTEXT, question)
    assert not bears_on("Vitamin D supplementation lowered the risk of diabetes.", question)


def test_it_weighs_independent_sources_by_design_and_rates_the_consensus():
    result = answer(FINDINGS, QUESTION, SUBQUESTIONS)
    q = result.question
    # for: one trial (3); against: a meta-analysis (4) and a trial (3).
    assert (q.consensus, q.weight_for, q.weight_against) == (AGAINST, 3.0, 7.0)
    lead, designs = q.sentences[0].text, q.sentences[1].text
    assert lead == (
        "3 of the 4 approved findings, from 3 independent sources, state an effect of "
        "vitamin D supplementation on the risk of fractures or falls."
    )
    assert designs == (
        "1 meta-analysis found no significant effect; 2 randomized controlled trials: 1 found "
        "a reduction (by 43 percent), 1 an increase (by 15 percent)."
    )
    assert q.sentences[1].claims == ["b", "a", "c"]


def test_it_counts_one_independence_cluster_once():
    twins = [
        finding("a", TRIAL, "decreases", source="trial-1", cluster="press-release"),
        finding(
            "b",
            TRIAL.replace("Daily", "Weekly"),
            "decreases",
            source="trial-2",
            cluster="press-release",
        ),
    ]
    q = answer(twins, QUESTION, []).question
    assert q.weight_for == 3.0 and q.consensus == SUPPORTS
    assert "from 1 independent source," in q.sentences[0].text
    assert q.sentences[1].text.startswith("1 randomized controlled trial found a reduction")


def test_it_calls_weak_evidence_insufficient_and_mixed_evidence_mixed():
    weak = [finding("a", TRIAL, "decreases", source="x", design="narrative-review")]
    assert answer(weak, QUESTION, []).question.consensus == INSUFFICIENT
    mixed = [
        finding("a", TRIAL, "decreases", source="x"),
        finding("b", META, "not associated", source="y", design="cohort"),
    ]
    assert answer(mixed, QUESTION, []).question.consensus == MIXED


def test_it_does_not_count_a_finding_approved_without_verified_support():
    marked = [finding("a", TRIAL, "decreases", source="x", marked=True)]
    q = answer(marked, QUESTION, []).question
    assert q.consensus == INSUFFICIENT
    assert q.sentences[0].text == (
        "The one approved finding (from 1 source) does not address the effect of vitamin D "
        "supplementation on the risk of fractures or falls."
    )
    assert "1 further approved finding on the question is not counted" in q.sentences[1].text
    # Nothing verified: the closing quote does not call it what the verifiers trusted most.
    assert q.sentences[-1].text == (
        "No approved finding here was verified; one a reviewer approved without verified "
        f"support: “{TRIAL}”"
    )


def test_it_says_what_a_subquestion_without_direct_findings_holds():
    lines = {line.key: line for line in answer(FINDINGS, QUESTION, SUBQUESTIONS).subquestions}
    assert lines["s3"].consensus == INSUFFICIENT
    assert [s.text for s in lines["s3"].sentences] == ["No claim was approved."]
    # One trial against, and context that is not counted: one trial's weight suffices.
    assert (lines["s2"].consensus, lines["s2"].weight_against) == (AGAINST, 3.0)
    assert [s.text for s in lines["s2"].sentences][1] == (
        "1 randomized controlled trial found an increase (by 15 percent)."
    )


def test_it_does_not_rate_a_question_that_asks_no_direction():
    confident = [finding("a", TRIAL, "decreases", source="t", confidence=0.9), *FINDINGS[1:]]
    result = answer(confident, "What is vitamin D?", [])
    assert result.question.consensus == NOT_RATED
    assert result.question.sentences[-1].text == (
        f"The approved finding the verifiers were most confident in: “{TRIAL}”"
    )
    assert "not rated" in result.rule[0]


def test_it_prints_only_numbers_it_counted_or_that_a_cited_claim_states():
    texts = {f.code: f.text for f in FINDINGS}
    result = answer(FINDINGS, QUESTION, SUBQUESTIONS)
    for line in [result.question, *result.subquestions]:
        for sentence in line.sentences:
            counted = {str(c.value) for c in sentence.counts}
            stated = {n for code in sentence.claims for n in numbers(texts[code])}
            assert set(numbers(sentence.text)) <= counted | stated, sentence.text
            for count in sentence.counts:
                backing = count.sources if count.unit == "sources" else count.claims
                assert count.value == len(backing), count
                assert set(count.claims) <= set(texts), count


def test_it_says_when_one_source_reports_findings_both_ways():
    both = [
        finding("a", TRIAL, "decreases", source="trial"),
        finding("b", META.replace("alone", "in the same trial"), "not associated", source="trial"),
        finding("c", TRIAL.replace("Daily", "Weekly"), "decreases", source="other"),
    ]
    q = answer(both, QUESTION, []).question
    assert q.sentences[1].text == (
        "2 randomized controlled trials: 2 found a reduction, 1 no significant effect (one "
        "source can report both, for different outcomes or groups)."
    )
    assert [(c.value, c.unit) for c in q.sentences[1].counts] == [
        (2, "sources"),
        (2, "sources"),
        (1, "sources"),
    ]


def test_it_keeps_only_clean_noun_phrases_in_the_evidence_table():
    from reports.exports.answer import noun_phrase

    assert noun_phrase("Vitamin D3 and calcium supplementation") == (
        "Vitamin D3 and calcium supplementation"
    )
    assert noun_phrase("with a lower risk of fractures") == "a lower risk of fractures"
    assert noun_phrase("Annual high-dose oral cholecalciferol resulted in an") == (
        "Annual high-dose oral cholecalciferol"
    )
    for garbled in (
        "Observational data cannot establish that supplementation would",
        "these concentrations",
        "reached with the currently recommended intakes of 200 IU",
        "subjects with a low vitamin D and raised PTH mean retention was 55",
    ):
        assert noun_phrase(garbled) == "", garbled
    # Who was studied, or what was measured, is not the intervention.
    assert noun_phrase("In subjects with a low vitamin D and", intervention=True) == ""
    assert noun_phrase("The number of nonvertebral fractures was", intervention=True) == ""


def test_a_gap_names_the_evidence_of_the_question_s_field():
    from reports.exports.answer import GapInputs, would_answer
    from reports.inputs import gap_wording

    def gap(question: str, dimension: str) -> str:
        inputs = GapInputs(question, "", True, {"s1": dimension}, {}, gap_wording(question))
        return would_answer(inputs, "s1")

    assert gap(QUESTION, "comparison") == (
        "Trials comparing vitamin D supplementation with placebo, alternatives or "
        "combinations for the risk of fractures or falls."
    )
    assert gap(QUESTION, "evidence").startswith("Randomized controlled trials or a meta-analysis")
    carbon = "Do carbon taxes reduce emissions?"
    assert gap(carbon, "comparison") == (
        "Studies comparing carbon taxes with alternative policies or combinations for emissions."
    )
    assert gap(carbon, "implementation") == (
        "Studies that state the designs and levels of carbon taxes they tested."
    )
    versus = "Do statins reduce mortality compared with placebo in women over 70?"
    assert gap(versus, "comparison") == ("Trials comparing statins with placebo for mortality.")
    typing = "Does static typing reduce bugs in Python codebases?"
    assert "placebo" not in gap(typing, "comparison")
    assert gap(typing, "provenance").startswith("The original papers or benchmarks")


def test_the_evidence_table_shows_a_direction_only_beside_an_outcome_it_names():
    from reports.exports.answer import finding_cell
    from research.pipeline.claims.facets import facets

    warranted = (
        "For bone health in older adults, an increase in the currently recommended intake of "
        "vitamin D is warranted."
    )
    assert finding_cell("C1", facets(warranted), labelled=True) == ""  # "increases" what?
    assert finding_cell("C2", facets(TRIAL), labelled=True) == "C2: decreases, by 43 percent"


def test_a_finding_about_another_population_is_reported_and_not_counted():
    question = "Do statins reduce mortality in patients with heart failure?"
    primary = finding(
        "C1",
        "Treatment with statins significantly reduced the risk of all cause mortality "
        "(odds ratio 0.88).",
        "decreases",
        source="doi:1",
        design="meta-analysis",
    )
    result = answer([primary], question, [("s1", "What do studies report?")])
    line = result.question
    texts = " ".join(s.text for s in line.sentences)

    assert line.consensus == INSUFFICIENT  # a meta-analysis, but not in heart failure
    assert "address the effect of statins on mortality in patients with heart failure" in texts
    assert "1 approved finding states an effect of statins on mortality, but not in " in texts
    assert "(neither it nor its source names it): indirect evidence, not counted" in texts
    # with a finding off the question beside it, the one quoted is the one on the question
    cells = finding(
        "C2",
        "Statins reduced the viability of carcinoma cells.",
        "decreases",
        source="doi:2",
        design="in-vitro",
        confidence=0.99,
    )
    quoted = answer([primary, cells], question, [("s1", "What?")]).question.sentences[-1]
    assert quoted.claims == ["C1"]
    # the same finding from a source whose title names the population is counted
    titled = replace(
        primary,
        sources=(SourceFacts("doi:1", "", "meta-analysis", "Statins in chronic heart failure"),),
    )
    assert answer([titled], question, [("s1", "What?")]).question.consensus == SUPPORTS
    # a population the scope reads (ages) is not checked here, nor a qualifier of a disease
    assert read_question(QUESTION).population_stems == frozenset()
    diabetes = read_question("Does metformin reduce mortality in patients with type 2 diabetes?")
    assert diabetes.population_stems == {"diabet"}


def test_a_table_cell_does_not_end_on_an_adverb():
    from reports.exports.answer import noun_phrase

    assert noun_phrase("Treatment with statins significantly", intervention=True) == (
        "Treatment with statins"
    )
    assert noun_phrase("the risk of all cause mortality") == "the risk of all cause mortality"


def test_a_gap_whose_findings_were_filed_elsewhere_says_where_they_went():
    # A counter-evidence subquestion whose only finding agreed with the question had it
    # filed under the evidence subquestion: its gap row must say so, not "no claim mined".
    from reports.exports.answer import GapInputs, gap_rows
    from reports.exports.records import PlanQueryRow, PlanSubquestionRow
    from reports.inputs import gap_wording

    subs = [
        PlanSubquestionRow(key="s1", text="What do trials show?", queries=[]),
        PlanSubquestionRow(
            key="s2",
            text="What evidence shows no effect?",
            queries=[PlanQueryRow(key="q1", text="null result", query_class="counter")],
        ),
    ]
    inputs = GapInputs(
        QUESTION,
        "",
        True,
        {"s1": "evidence", "s2": "counter"},
        {"s1": [], "s2": []},
        gap_wording(QUESTION),
        filed_under={"s2": ["s1", "s1"]},
    )
    rows = {row.key: row for row in gap_rows(subs, set(), inputs, {})}
    assert rows["s2"].state == "what it found is filed under another subquestion"
    assert rows["s2"].found.startswith("2 finding(s) found here filed under s1")
    assert rows["s2"].searched == ["null result"]
    # A subquestion nothing points away from keeps the plain wording.
    assert rows["s1"].state == "no relevant finding in what was searched"
    assert "filed under" not in rows["s1"].found
