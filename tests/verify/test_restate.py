"""Issue 26, item 2: a reviewer's rewording of a claim is judged by the families against
the claim it replaces (both directions), with attribution and markup set aside; a change
of meaning is never a restatement. The shipped offline families (learned + align, rules)."""

from __future__ import annotations

import pytest

from research.pipeline.verify import default_config, verify_claim
from research.pipeline.verify.records import ClaimInput
from research.pipeline.verify.restate import plain, premise_item, reporting_frame, restates

FALLS = "Vitamin D supplementation reduces the risk of falls in older adults."
PLUGINS = "Legacy plugins will not be supported after version 3.0 of the framework."
TRIAL = "The trial enrolled 400 patients with hypertension across 12 sites."

REWORDINGS = [
    (FALLS, "A narrative review states that " + FALLS[0].lower() + FALLS[1:]),
    (FALLS, "* " + FALLS),
    (FALLS, "**Vitamin D supplementation** reduces the risk of falls in older adults."),
    (FALLS, "Vitamin D supplementation lowers the risk of falls in older adults."),
    (PLUGINS, "Legacy plugins are not supported after version 3.0 of the framework."),
    (TRIAL, "- " + TRIAL),
    (TRIAL, "The authors report that the trial enrolled 400 patients with hypertension "
            "across 12 sites."),
    # A frame naming a document by its number (a real narrowing in the walk of issue 26's
    # technical question: "PEP 703 states that …" came back UNCERTAIN).
    (TRIAL, "Section 4.2 of the protocol states that the trial enrolled 400 patients with "
            "hypertension across 12 sites."),
]  # fmt: skip
MEANING_CHANGES = [
    (FALLS, "Vitamin D supplementation does not reduce the risk of falls in older adults."),
    (FALLS, "Vitamin D supplementation increases the risk of falls in older adults."),
    (FALLS, "Vitamin D supplementation reduces the risk of falls in older adults and children."),
    (FALLS, "Vitamin D supplementation reduces the risk of falls."),  # a qualifier dropped
    (FALLS, "In children, vitamin D supplementation reduces the risk of falls in older adults."),
    (FALLS, "A narrative review states that vitamin D supplementation does not reduce the "
            "risk of falls in older adults."),
    (PLUGINS, "Legacy plugins are supported after version 3.0 of the framework."),
    (PLUGINS, "Legacy plugins will not be supported after version 4.0 of the framework."),
    (TRIAL, "The trial enrolled 40 patients with hypertension across 12 sites."),
]  # fmt: skip


@pytest.fixture(scope="module")
def judge():
    config = default_config()
    return lambda hypothesis, premise: verify_claim(hypothesis, [premise_item(premise)], config)


@pytest.mark.parametrize(("original", "narrowed"), REWORDINGS)
def test_it_finds_a_faithful_rewording_restates_the_claim(judge, original, narrowed):
    judged = restates(ClaimInput("c1", original), narrowed, judge)
    assert judged.holds, judged.reason
    assert judged.confidence > 0


@pytest.mark.parametrize(("original", "narrowed"), MEANING_CHANGES)
def test_it_never_finds_a_change_of_meaning_restates_the_claim(judge, original, narrowed):
    judged = restates(ClaimInput("c1", original), narrowed, judge)
    assert not judged.holds
    assert judged.reason.startswith(("the original does not entail", "the new wording drops"))


def test_it_removes_markdown_markup_only():
    assert plain("* **Drug A** lowers `blood` pressure_") == "Drug A lowers blood pressure"
    assert plain("1. Drug A lowers blood-pressure by 5%.") == "Drug A lowers blood-pressure by 5%."


def test_it_sets_aside_a_reporting_frame_but_not_a_negated_or_topical_one():
    claim = "Drug A lowers blood pressure."
    assert reporting_frame(claim, "A review states that Drug A lowers blood pressure.") == (
        "A review states",
        "Drug A lowers blood pressure.",
    )
    for named in ("PEP 703 states", "ISO 27001 requires", "Section 4.2 of the protocol says"):
        assert reporting_frame(claim, f"{named} that Drug A lowers blood pressure.") == (
            named,
            "Drug A lowers blood pressure.",
        )
    for kept in (
        "It is not true that Drug A lowers blood pressure.",  # a negation
        "Two of 3 trials found that Drug A lowers blood pressure.",  # a number
        "In 3 trials it was found that Drug A lowers blood pressure.",  # a count, not a name
        "Drug A trials show that it lowers blood pressure.",  # the claim's own words
    ):
        assert reporting_frame(claim, kept) == ("", kept)
