from __future__ import annotations

import httpx
import pytest

from research.pipeline.claims.outcome import parse_aim
from research.pipeline.planner import (
    OFFLINE_PLANNER,
    analyze_question,
    field_register,
    followup_queries,
    llm_plan,
    offline_plan,
)
from research.pipeline.records import (
    QUERY_CLASSES,
    PlanSchemaError,
    normalize_query,
    parse_plan,
    run_blockers,
)
from research.providers.llm import LLMClient, LLMConfig
from tests.fake_openai import completion

VITAMIN_D = "Does vitamin D supplementation reduce the risk of fractures in older adults?"
QUESTIONS = [
    VITAMIN_D,
    "What is reciprocal rank fusion?",
    "BM25 vs dense retrieval",
    "How does CRISPR gene editing work?",
    "climate change and coral reefs",
    "Can exercise improve depression symptoms among teenagers?",
    "Wer hat die Relativitätstheorie entwickelt?",
]


def llm_client(reply: str | None, status: int = 200) -> LLMClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if reply is None:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(status, json=completion(reply))

    return LLMClient(
        LLMConfig(base_url="http://llm.test/v1", model="tiny"),
        transport=httpx.MockTransport(handler),
    )


@pytest.mark.parametrize("question", QUESTIONS)
def test_it_plans_any_question_across_dimensions_with_counter_evidence(question):
    plan = offline_plan(question)

    parse_plan(plan.dump())  # round-trips through the schema
    assert run_blockers(plan) == []
    dimensions = {sq.dimension for sq in plan.subquestions}
    assert len(dimensions) >= 6
    classes = {q.query_class for _, q in plan.enabled_queries()}
    assert "counter-evidence" in classes
    assert len(classes) >= 7
    assert all(q.source_classes for _, q in plan.enabled_queries())
    norms = [normalize_query(q.text) for _, q in plan.enabled_queries()]
    assert len(norms) == len(set(norms))
    assert plan.planner == OFFLINE_PLANNER


def test_it_is_deterministic():
    assert offline_plan(VITAMIN_D).dump() == offline_plan(VITAMIN_D).dump()


def test_it_reads_an_effect_question():
    shape = analyze_question(VITAMIN_D)

    assert shape.kind == "effect"
    assert shape.subject == "vitamin D supplementation"
    assert shape.verb == "reduce"
    assert shape.outcome == "the risk of fractures"
    assert shape.population == "older adults"


@pytest.mark.parametrize(
    ("question", "subject", "verb", "outcome", "population"),
    [
        # a last word of X that looks like a verb stays in X
        ("Do minimum wage increases reduce teen employment?", "minimum wage increases",
         "reduce", "teen employment", ""),
        ("Do price increases lower demand among smokers?", "price increases", "lower",
         "demand", "smokers"),
        ("Does static typing reduce the number of bugs in large codebases?", "static typing",
         "reduce", "the number of bugs", "large codebases"),
        ("Do carbon taxes reduce emissions?", "carbon taxes", "reduce", "emissions", ""),
        ("How does exercise affect depression symptoms among teenagers?", "exercise", "affect",
         "depression symptoms", "teenagers"),
        ("Is remote work associated with developer productivity?", "remote work",
         "associated with", "developer productivity", ""),
        ("What is the effect of the new garbage collector on request latency?",
         "the new garbage collector", "on", "request latency", ""),
        # "for" after need, risk, demand … belongs to the outcome; else it names who
        ("Does physiotherapy reduce the need for surgery in knee osteoarthritis?",
         "physiotherapy", "reduce", "the need for surgery", "knee osteoarthritis"),
        ("Do carbon taxes reduce demand for petrol among households?", "carbon taxes",
         "reduce", "demand for petrol", "households"),
        ("Does remote work reduce productivity for software teams?", "remote work", "reduce",
         "productivity", "software teams"),
    ],
)  # fmt: skip
def test_it_reads_effect_questions_of_any_domain_as_outcome_relevance_does(
    question, subject, verb, outcome, population
):
    shape = analyze_question(question)
    aim = parse_aim(question)

    assert shape.kind == "effect"
    assert (shape.subject, shape.verb, shape.outcome, shape.population) == (
        subject,
        verb,
        outcome,
        population,
    )
    # one grammar: the planner's X and Y are the ones candidates are checked against
    assert aim is not None and (aim.exposure, aim.outcome) == (shape.subject, shape.outcome)


def test_it_plans_a_wage_question_about_wage_increases_and_employment():
    plan = offline_plan("Do minimum wage increases reduce teen employment?")
    texts = [sq.text for sq in plan.subquestions]
    queries = [q.text for _, q in plan.enabled_queries()]

    assert "What exactly are minimum wage increases and teen employment?" in texts
    assert "Through what mechanism could minimum wage increases affect teen employment?" in texts
    assert not any("reduce teen employment" in t for t in texts[2:])  # Y is not "reduce …"
    assert "minimum wage increases do not reduce teen employment" in queries
    assert "minimum wage increases increase teen employment" in queries  # the opposite
    assert all("does not increases" not in q for q in queries)


def test_it_agrees_the_verb_with_the_subject():
    plural = offline_plan("Do carbon taxes reduce emissions?").subquestions[0].text
    singular = offline_plan("Does a carbon tax reduce emissions?").subquestions[0].text
    tied = offline_plan("Is remote work associated with developer productivity?")

    assert plural == "What do studies report about whether carbon taxes reduce emissions?"
    assert singular == "What do studies report about whether a carbon tax reduces emissions?"
    assert "whether remote work is associated with developer productivity" in (
        tied.subquestions[0].text
    )
    assert "remote work not associated with developer productivity" in [
        q.text for _, q in tied.enabled_queries()
    ]


CLINICAL_WORDS = ("placebo", "dose", "regimen", "randomized", "trial", "adverse", "cohort")


@pytest.mark.parametrize(
    ("question", "field", "expected"),
    [
        (
            "Do carbon taxes reduce emissions?",
            "policy",
            "carbon taxes versus alternative policies emissions",
        ),
        (
            "Does static typing reduce bugs in Python codebases?",
            "technical",
            "static typing bugs Python codebases benchmark evaluation empirical study",
        ),
        (
            "Does social media use increase loneliness among teenagers?",
            "general",
            "social media use forms variants loneliness",
        ),
        (
            "Is remote work associated with developer productivity?",
            "general",
            "remote work developer productivity empirical study",
        ),
    ],
)
def test_it_words_an_effect_plan_in_the_question_s_field(question, field, expected):
    plan = offline_plan(question)
    words = " ".join(
        [sq.text for sq in plan.subquestions] + [q.text for _, q in plan.enabled_queries()]
    ).casefold()
    sq = next(sq for sq in plan.subquestions if sq.dimension == "implementation")
    followups = followup_queries(
        sq, plan.question, weak=True, one_sided=False, issued=set(), limit=3, round_no=1
    )

    assert field_register(question).name == field
    assert expected in [q.text for _, q in plan.enabled_queries()]
    # a question outside medicine is not searched for doses, placebos or trials
    assert not [w for w in CLINICAL_WORDS if w in words]
    assert not [w for w in CLINICAL_WORDS if w in " ".join(f.text for f in followups)]


def test_it_searches_what_an_effect_question_compares_with():
    question = "Does TypeScript reduce runtime errors compared with JavaScript in large codebases?"
    shape = analyze_question(question)
    plan = offline_plan(question)
    comparison = next(sq for sq in plan.subquestions if sq.dimension == "comparison")

    assert (shape.subject, shape.outcome, shape.population, shape.other) == (
        "TypeScript",
        "runtime errors",
        "large codebases",
        "JavaScript",
    )
    assert comparison.text == "How does TypeScript compare with JavaScript for runtime errors?"
    assert comparison.queries[0].text == "TypeScript versus JavaScript runtime errors"
    # the comparator is neither the outcome outcome-aware relevance checks nor the population
    aim = parse_aim(question)
    assert aim is not None and aim.outcomes == ("runtime errors",)


def test_it_keeps_the_clinical_wording_for_a_clinical_question():
    plan = offline_plan(VITAMIN_D)
    queries = [q.text for _, q in plan.enabled_queries()]
    texts = [sq.text for sq in plan.subquestions]

    assert field_register(VITAMIN_D).name == "clinical"
    assert "vitamin D supplementation versus placebo risk fractures" in queries
    assert "vitamin D supplementation dose regimen risk fractures" in queries
    assert "Which doses, forms or regimens of vitamin D supplementation were studied?" in texts
    # the verb agrees in the comparison subquestion too
    assert any(
        t.startswith("How do carbon taxes compare")
        for t in (sq.text for sq in offline_plan("Do carbon taxes reduce emissions?").subquestions)
    )


@pytest.mark.parametrize(
    "question",
    [
        "What is known about the safety of mRNA vaccines?",
        "How does CRISPR gene editing work?",
        "BM25 vs dense retrieval",
        "Which doses, forms or regimens of vitamin D were studied?",
    ],
)
def test_it_keeps_other_shapes_out_of_the_effect_plan(question):
    assert analyze_question(question).kind != "effect"
    assert parse_aim(question) is None


def test_it_keeps_the_vitamin_d_plan_as_it_was():
    plan = offline_plan(
        "Does vitamin D supplementation reduce the risk of fractures or falls in older adults?"
    )

    assert [sq.text for sq in plan.subquestions][:2] == [
        "What do studies report about whether vitamin D supplementation reduces the risk of "
        "fractures or falls in older adults?",
        "What evidence contradicts or qualifies the claim that vitamin D supplementation "
        "reduces the risk of fractures or falls?",
    ]
    assert [q.text for q in plan.subquestions[1].queries][:3] == [
        "vitamin D supplementation does not reduce risk fractures falls",
        "vitamin D supplementation no effect on risk fractures falls older adults",
        "vitamin D supplementation increase risk fractures falls",
    ]


def test_it_builds_effect_queries_from_the_question_terms():
    plan = offline_plan(VITAMIN_D)
    texts = [q.text for _, q in plan.enabled_queries()]

    assert any("does not reduce" in t and "fractures" in t for t in texts)
    assert any("increase" in t for t in texts)  # the opposite direction is searched too
    top = max(plan.subquestions, key=lambda sq: sq.priority)
    assert "fractures" in top.text


@pytest.mark.parametrize("question", ["", "   ", "x" * 10_000, "?!"])
def test_it_refuses_an_unusable_question_in_words(question):
    with pytest.raises(PlanSchemaError) as exc:
        offline_plan(question)

    assert exc.value.messages
    assert all(len(m) > 20 for m in exc.value.messages)


def test_it_takes_a_valid_llm_plan():
    reply = """{"subquestions": [
      {"text": "Does vitamin D prevent fractures?", "dimension": "evidence", "priority": 3,
       "queries": [{"text": "vitamin D fracture trial", "query_class": "benchmark",
                    "source_classes": ["library"]},
                   {"text": "vitamin D no fracture benefit", "query_class": "counter-evidence"}]}
    ]}"""

    plan = llm_plan(VITAMIN_D, llm_client(reply))

    assert plan.planner == "llm:tiny@http://llm.test/v1"
    assert plan.planner_message == ""
    assert [q.key for _, q in plan.enabled_queries()] == ["s1q1", "s1q2"]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("this is not json", "could not be asked"),
        ('{"subquestions": "none"}', "invalid"),
        (
            '{"subquestions": [{"text": "x y", "queries": [{"text": "a b", '
            '"query_class": "astrology"}]}]}',
            "unknown query class",
        ),
        (
            '{"subquestions": [{"text": "x y", "queries": [{"text": "a b", '
            '"query_class": "definition"}, {"text": "A  B", "query_class": "definition"}]}]}',
            "Duplicate query",
        ),
        (
            '{"subquestions": [{"text": "x y", "queries": [{"text": "a b", '
            '"query_class": "definition"}]}]}',
            "no counter-evidence",
        ),
        (None, "could not be asked"),
    ],
)
def test_it_falls_back_to_the_offline_plan_when_the_llm_plan_is_invalid(reply, why):
    plan = llm_plan(VITAMIN_D, llm_client(reply))

    assert plan.planner == OFFLINE_PLANNER
    assert why in plan.planner_message
    assert plan.dump()["subquestions"] == offline_plan(VITAMIN_D).dump()["subquestions"]


def test_it_rejects_budget_zero_and_duplicate_queries():
    content = offline_plan(VITAMIN_D).dump()
    content["budgets"]["queries"] = 0
    with pytest.raises(PlanSchemaError) as exc:
        parse_plan(content)
    assert "budgets.queries" in exc.value.messages[0]

    content = offline_plan(VITAMIN_D).dump()
    content["subquestions"][1]["queries"][0]["text"] = content["subquestions"][0]["queries"][0][
        "text"
    ].upper()
    with pytest.raises(PlanSchemaError) as exc:
        parse_plan(content)
    assert "Duplicate query" in exc.value.messages[0]


def test_it_blocks_a_run_when_every_query_is_disabled():
    plan = offline_plan(VITAMIN_D)
    for sq in plan.subquestions:
        for q in sq.queries:
            q.enabled = False

    assert "Every query is disabled" in run_blockers(plan)[0]


def test_it_proposes_targeted_followups_once():
    plan = offline_plan(VITAMIN_D)
    sq = plan.subquestions[0]
    issued = {normalize_query(q.text) for _, q in plan.enabled_queries()}

    first = followup_queries(
        sq, plan.question, weak=True, one_sided=True, issued=issued, limit=3, round_no=1
    )
    again = followup_queries(
        sq, plan.question, weak=True, one_sided=True, issued=issued, limit=3, round_no=2
    )

    assert len(first) == 3
    assert first[0].query_class == "counter-evidence" and "one-sided" in first[0].reason
    assert {f.text for f in first}.isdisjoint({f.text for f in again})
    assert all(f.query_class in QUERY_CLASSES for f in first + again)
    assert (
        followup_queries(
            sq, plan.question, weak=False, one_sided=False, issued=set(), limit=3, round_no=1
        )
        == []
    )
