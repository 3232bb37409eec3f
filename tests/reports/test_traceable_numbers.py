"""The bottom line's traceability check counts numbers, not the names the question uses.

A question about COVID-19, CPython 3.13 or type 2 diabetes never built a report: the
check read the question's own digits, repeated in the bottom line, as numbers no claim
states ("19 is neither counted nor stated").
"""

from __future__ import annotations

from reports.exports.answer import untraceable_numbers
from reports.exports.records import (
    AnswerSection,
    AnswerSentenceRow,
    BibEntry,
    BottomLineRow,
    ClaimRow,
    CountRow,
    EvidenceRow,
    Header,
    PlanAppendix,
    PlanSubquestionRow,
    ReportDocument,
)


def _document(question: str, sentence: str, *, subquestion: str = "", title: str = ""):
    claim = ClaimRow.model_construct(label="C1", text="Vaccination lowered admissions.")
    counts = [CountRow(value=2, what="sources", unit="sources", claims=["C1"], sources=[1, 2])]
    line = BottomLineRow(
        key="",
        title=question,
        consensus="supports",
        sentences=[
            AnswerSentenceRow(
                text=sentence, claims=["C1"], claim_codes=[], citations=[1], counts=counts
            )
        ],
    )
    plan = PlanAppendix.model_construct(
        question=question,
        scope="",
        subquestions=[PlanSubquestionRow(key="s1", text=subquestion, queries=[])],
    )
    return ReportDocument.model_construct(
        header=Header.model_construct(title=question),
        claims=[claim],
        appendix_b=[EvidenceRow.model_construct(claim="C1", source=n) for n in (1, 2)],
        appendix_d=plan,
        bibliography=[BibEntry.model_construct(number=1, title=title)],
        answer=AnswerSection(question=line),
    )


def test_a_named_number_of_the_question_is_not_a_count():
    doc = _document(
        "Does COVID-19 vaccination reduce hospital admissions?",
        "On COVID-19 vaccination, 2 sources support that it reduces admissions.",
    )
    assert untraceable_numbers(doc) == []


def test_a_version_of_the_question_stays_whole_and_is_a_name():
    doc = _document(
        "What does free threading cost in CPython 3.13?",
        "In CPython 3.13, 2 sources report a cost.",
    )
    assert untraceable_numbers(doc) == []


def test_a_qualifier_of_a_subquestion_or_a_title_is_a_name():
    doc = _document(
        "Does metformin help?",
        "For type 2 diabetes, 2 sources support it; as the STEP-1 trial reports.",
        subquestion="Does metformin lower HbA1c in type 2 diabetes?",
        title="The STEP-1 trial of semaglutide",
    )
    assert untraceable_numbers(doc) == []


def test_a_number_the_question_does_not_name_is_still_refused():
    doc = _document(
        "Does COVID-19 vaccination reduce hospital admissions?",
        "On COVID-19 vaccination, 2 sources support a 19 % reduction.",
    )
    assert untraceable_numbers(doc) == [
        "“On COVID-19 vaccination, 2 sources support a 19 % reduction.”: "
        "19 is neither counted nor stated"
    ]


def test_a_bare_number_is_not_excused_by_a_name_that_contains_it():
    doc = _document(
        "Does metformin help in type 2 diabetes?",
        "2 sources support it, in 2 of 3 trials.",
    )
    assert untraceable_numbers(doc) == [
        "“2 sources support it, in 2 of 3 trials.”: 3 is neither counted nor stated"
    ]
