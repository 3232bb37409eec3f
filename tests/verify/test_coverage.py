from __future__ import annotations

import pytest

from research.pipeline.verify.coverage import CoverageVerifier
from research.pipeline.verify.records import ClaimInput, VoteVerdict

from .helpers import SUPPORT_QUOTE, SUPPORT_TEXT, item

VERIFIER = CoverageVerifier()


def judge(claim: str, text: str = SUPPORT_TEXT):
    return VERIFIER.judge_one(ClaimInput("c1", claim), item("e1", text))


def test_it_supports_only_a_window_stating_every_word_of_the_claim():
    vote = judge("Aspirin reduces fever in adults.")
    assert (vote.family, vote.verdict) == ("coverage", VoteVerdict.SUPPORTS)
    assert vote.quote == SUPPORT_QUOTE  # an exact substring, the shortest full window


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("Aspirin reduces fever and headache in adults.", "'headache'"),
        ("Aspirin reduces fever in 500 adults.", "'500'"),
        ("Aspirin increases fever in adults.", "'increases'"),
        ("Aspirin does not reduce fever in adults.", "negation"),
        ("Fever reduces aspirin in adults.", "other way round"),
        ("Ibuprofen reduces fever in adults.", "'ibuprofen'"),
    ],
)
def test_it_does_not_support_a_near_miss_and_names_what_is_missing(claim, why):
    vote = judge(claim)
    assert vote.verdict == VoteVerdict.INSUFFICIENT
    assert why in vote.rationale


def test_it_reads_two_adjacent_sentences_as_one_window():
    text = "Methods. We enrolled 400 adults with fever. Aspirin reduced their fever within hours."
    vote = judge("Aspirin reduced fever in 400 adults.", text)
    assert vote.verdict == VoteVerdict.INSUFFICIENT  # the roles are out of order
    vote = judge("400 adults with fever: aspirin reduced their fever.", text)
    assert vote.verdict == VoteVerdict.SUPPORTS
    assert (
        vote.quote == "We enrolled 400 adults with fever. Aspirin reduced their fever within hours."
    )


def test_it_does_not_support_a_certain_claim_from_hedged_evidence():
    text = "Discussion. Aspirin may reduce fever in adults, but larger trials are needed."
    vote = judge("Aspirin reduces fever in adults.", text)
    assert vote.verdict == VoteVerdict.INSUFFICIENT
    assert "hedged" in vote.rationale


def test_it_calls_a_forecast_beyond_the_sources_horizon_unverifiable():
    text = "Outlook 2020. Solar capacity grew by 20% in 2019 across Europe."
    vote = judge("Solar capacity will double across Europe by 2040.", text)
    assert vote.verdict == VoteVerdict.UNVERIFIABLE
    assert judge("the of and", text).verdict == VoteVerdict.UNVERIFIABLE


def test_it_never_contradicts():
    refuting = "Trial. In 900 adults, aspirin did not reduce fever."
    assert judge("Aspirin reduces fever in adults.", refuting).verdict != VoteVerdict.CONTRADICTS
