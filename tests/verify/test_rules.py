from __future__ import annotations

import pytest

from research.pipeline.verify.records import ClaimInput, Flag, VoteVerdict
from research.pipeline.verify.rules import RulesVerifier

from .helpers import item

RULES = RulesVerifier()


def judge(claim_text: str, passage: str, **claim_fields):
    return RULES.judge_one(ClaimInput("c1", claim_text, **claim_fields), item("e1", passage))


def test_it_catches_a_negated_effect_as_the_opposite_direction():
    v = judge(
        "Aspirin reduces fever in adults.",
        "Trial. In adults, aspirin did not reduce fever compared with placebo.",
    )
    assert v.verdict == VoteVerdict.CONTRADICTS
    assert v.rationale.startswith("direction mismatch")
    assert v.quote == "In adults, aspirin did not reduce fever compared with placebo."


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        # Real runs where a negation word on one side FAILed a true claim (issue 22).
        (
            "Extension modules need to explicitly indicate that they support running with "
            "the GIL disabled.",
            "Extension modules need to explicitly indicate they support running with the GIL "
            "disabled, otherwise a warning is printed and the GIL is re-enabled at runtime "
            "after importing a module that does not support the GIL.",
        ),
        (
            "Agencies are encouraged to release a greater percentage of code, but agencies are "
            "not required to release more than 20 percent of code.",
            "Although the minimum requirement for release is 20 percent of code, agencies are "
            "strongly encouraged to release as much code as possible.",
        ),
    ],
)
def test_a_negation_word_on_one_side_is_no_contradiction(claim, sentence):
    assert judge(claim, "Policy. " + sentence).verdict != VoteVerdict.CONTRADICTS


def test_it_catches_opposite_directions_and_antonyms():
    up = judge(
        "Exercise increases insulin sensitivity in adults.",
        "Exercise decreased insulin sensitivity in adults markedly.",
    )
    assert up.verdict == VoteVerdict.CONTRADICTS
    assert "direction mismatch" in up.rationale
    anto = judge(
        "The mutation is benign in carriers.", "The mutation is malignant in most carriers studied."
    )
    assert anto.verdict == VoteVerdict.CONTRADICTS
    assert "antonym" in anto.rationale


def test_it_catches_a_number_mismatch():
    v = judge(
        "The recommended dose is 5 mg daily for adults.",
        "Guidance. The recommended dose is 10 mg daily for adults.",
    )
    assert v.verdict == VoteVerdict.CONTRADICTS
    assert "number mismatch" in v.rationale


def test_it_catches_a_unit_mismatch():
    v = judge(
        "The recommended dose is 5 mg daily for adults.",
        "Guidance. The recommended dose is 5 g daily for adults.",
    )
    assert v.verdict == VoteVerdict.CONTRADICTS
    assert "unit mismatch" in v.rationale


def test_it_flags_hedged_evidence_behind_a_certain_claim():
    v = judge(
        "Vitamin D prevents respiratory infections in children.",
        "Review. Vitamin D may prevent respiratory infections in some children.",
    )
    assert v.verdict == VoteVerdict.INSUFFICIENT
    assert Flag.OVERSTATEMENT.value in v.flags
    assert "overstatement" in v.rationale


def test_it_flags_a_missing_entity_and_a_different_time_scope():
    entity = judge(
        "Compound BX-17 lowers blood pressure in adults.",
        "Trial. Compound AZ-3 lowers blood pressure in adults.",
        entities=("BX-17",),
    )
    assert entity.verdict == VoteVerdict.INSUFFICIENT
    assert Flag.SCOPE_GAP.value in entity.flags
    year = judge(
        "Unemployment fell in 2019 across Europe.", "Unemployment fell in 2021 across Europe."
    )
    assert Flag.SCOPE_GAP.value in year.flags


def test_it_never_supports_even_a_sentence_stating_the_claim():
    v = judge(
        "Aspirin reduces fever in adults.",
        "Trial. Aspirin reduces fever in adults within two hours.",
    )
    assert v.verdict == VoteVerdict.INSUFFICIENT  # a check family: literal support is coverage's
    assert v.quote == "Aspirin reduces fever in adults within two hours."
