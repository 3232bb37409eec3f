"""Outcome-aware relevance: what a question asks an effect on, and whether a finding names it.

Pure parts (parsing, lexical and embedding matching) on questions from medicine, economics
and software; the off-outcome drop through ``mine_run`` with the shipped sentence encoder.
The vitamin D run's own mining input is replayed in ``test_vitamin_d_offtopic.py``.
"""

from __future__ import annotations

import pytest

from research.pipeline.claims import PassageInput, RunInput, SubquestionInput, mine_run
from research.pipeline.claims.outcome import (
    alternatives,
    match_outcomes,
    other_outcome,
    outcome_focus,
    parse_aim,
    reported_measure,
)
from research.pipeline.text import passage_fingerprint
from research.providers.embedder import Embedder

VITAMIN_D = "Does vitamin D supplementation reduce the risk of fractures or falls in older adults?"
WAGES = "Do minimum wage increases reduce teen employment?"
GC = "What is the effect of the new garbage collector on request latency?"


@pytest.fixture(scope="module")
def encode():
    return Embedder().encode


def test_it_reads_exposure_and_outcomes_of_effect_questions_in_any_domain():
    aim = parse_aim(VITAMIN_D)
    assert aim is not None
    assert (aim.exposure, aim.outcomes) == ("vitamin D supplementation", ("fractures", "falls"))
    wages = parse_aim(WAGES)
    assert wages is not None and wages.outcomes == ("teen employment",)
    gc = parse_aim(GC)
    assert gc is not None
    assert (gc.exposure, gc.outcomes) == ("the new garbage collector", ("request latency",))
    tied = parse_aim("Is remote work associated with developer productivity among juniors?")
    assert tied is not None and tied.outcomes == ("developer productivity",)
    # inside a subquestion, after "whether" / "the claim that" / a modal
    inner = parse_aim(
        "What do studies report about whether statins reduce the risk of dementia in adults?"
    )
    assert inner is not None and (inner.exposure, inner.outcomes) == ("statins", ("dementia",))
    mechanism = parse_aim("Through what mechanism could exercise affect cognitive decline?")
    assert mechanism is not None and mechanism.outcomes == ("cognitive decline",)
    # no effect asked: a topic, a definition, a statement wrapped in a template
    assert parse_aim("Which doses, forms or regimens of vitamin D were studied?") is None
    assert parse_aim("What is a garbage collector?") is None
    assert parse_aim("How does ALDH1 expression is associated with prognosis work?") is None


def test_it_strips_measure_words_and_splits_alternatives():
    assert alternatives("the risk of fractures or falls") == ("fractures", "falls")
    assert alternatives("fracture risk") == ("fracture",)
    assert alternatives("the incidence of dementia, stroke and heart failure") == (
        "dementia",
        "stroke",
        "heart failure",
    )
    assert alternatives("the risk of developing type 2 diabetes") == ("type 2 diabetes",)
    assert reported_measure(
        "Individuals had 50% lower incidence of colorectal cancer compared to reference values."
    ) == ("colorectal cancer")
    assert reported_measure("Vitamin D insufficiency exacerbates osteoporosis.") == ""


def test_it_takes_the_subquestion_outcome_when_it_names_its_own():
    own = outcome_focus(VITAMIN_D, "Does vitamin D supplementation reduce mortality?")
    assert own is not None and (own.outcomes, own.required, own.source) == (
        ("mortality",),
        True,
        "subquestion",
    )
    evidence = outcome_focus(
        VITAMIN_D,
        "Through what mechanism could vitamin D supplementation affect the risk of fractures "
        "or falls?",
    )
    assert evidence is not None and (evidence.outcomes, evidence.required) == (
        ("fractures", "falls"),
        True,
    )
    # a subquestion about the exposure itself does not require the outcome
    doses = outcome_focus(VITAMIN_D, "Which doses, forms or regimens of vitamin D were studied?")
    assert doses is not None and doses.required is False
    assert outcome_focus("Which mechanisms underlie vitamin D metabolism?", "What is it?") is None


def test_it_matches_outcomes_by_stem_title_and_embedding(encode):
    focus = outcome_focus(WAGES, WAGES)
    assert focus is not None
    texts = [
        ("Minimum wage increases lowered employment of teenagers by 2 percent.", ""),
        ("Our estimates rule out large job losses after minimum wage increases.", ""),
        ("Minimum wage increases raised restaurant menu prices by 2.1 percent.", ""),
        ("Effects were larger in the second year.", "Minimum wages and teen employment"),
    ]
    found = match_outcomes(texts, focus, {}, encode)
    assert found[0].named and found[0].how == "teen employment"
    assert found[1].named and "≈ teen employment" in found[1].how, found[1]
    assert not found[2].named, found[2]
    assert found[3].named and found[3].how == "title: teen employment"
    # without an encoder only words match: the paraphrase is not recognised, nothing breaks
    lexical = match_outcomes(texts, focus, {}, None)
    assert [m.named for m in lexical] == [True, False, False, True]


def mine(question: str, subquestion: str, docs: list[tuple[str, str]], encode):
    passages = tuple(
        PassageInput(f"p{i}", text, passage_fingerprint(text), source_key=f"s{i}", title=title)
        for i, (title, text) in enumerate(docs)
    )
    sq = SubquestionInput("s1", subquestion, passages, ("q",), 3)
    return mine_run(RunInput(question, (sq,)), encode=encode)


@pytest.mark.parametrize(
    "question",
    [
        GC,
        "Does the new garbage collector reduce request latency?",
        "How does the new garbage collector affect request latency?",
    ],
)
def test_it_drops_findings_on_another_outcome_with_the_reason_and_score(question, encode):
    mined = mine(
        question,
        question,
        [
            (
                "Release 2.0 performance report",
                "The new garbage collector reduced p99 request latency from 80 ms to 12 ms "
                "compared with release 1.9. The new garbage collector increased memory use "
                "by 6 percent.",
            )
        ],
        encode,
    )
    result = mined.results["s1"]
    kept = [c.text for c in result.claims]
    assert any("latency" in text for text in kept), kept
    dropped = {d.text: d for d in result.dropped}
    memory = next(d for text, d in dropped.items() if "memory use" in text)
    # Every phrasing is read as X = the collector, Y = request latency (the planner's reading
    # too), so the memory finding names X but not Y. It shares the question's words, so its
    # score may clear the off-topic floor; the outcome check drops it whatever the score, with
    # the precise reason, off-outcome.
    assert memory.reason.startswith("off-outcome (relevance 0."), memory.reason
    assert "it is about memory use, not request latency" in memory.reason
    assert memory.relevance is not None
    kept_claim = next(c for c in result.claims if "latency" in c.text)
    assert kept_claim.relevance is not None
    assert kept_claim.relevance.outcome_match == "request latency"


def test_it_records_a_gap_when_every_finding_is_off_outcome(encode):
    mined = mine(
        WAGES,
        WAGES,
        [
            (
                "Minimum wages and restaurant prices",
                "Minimum wage increases raised average restaurant prices by 2.1 percent. "
                "Minimum wage increases lowered restaurant profits by 4 percent in 2007.",
            )
        ],
        encode,
    )
    assert mined.results["s1"].claims == []
    reasons = [d.reason for d in mined.results["s1"].dropped]
    assert reasons and all(r.startswith(("off-outcome", "off-topic")) for r in reasons), reasons
    assert mined.gaps[0].reason.startswith("its findings are about other outcomes")


def test_who_was_counted_is_never_the_other_outcome():
    exposure = {"vitamin", "d"}
    people = (
        "As the number of people with VDD continues to increase, the importance of this "
        "hormone is receiving attention."
    )
    assert other_outcome(people, ("fractures", "falls"), exposure) == ""
    cancer = "Vitamin D was associated with a lower incidence of colorectal cancer."
    assert other_outcome(cancer, ("fractures", "falls"), exposure) == "colorectal cancer"
