"""Issue 26, item 2: re-verifying a narrowed PASS claim on the same quote tolerates
attribution and light rewording; only a change of meaning loses PASS. Real verifiers."""

from __future__ import annotations

import pytest

from ledger.models import Verdict
from review.services.reverify import reverify
from tests.factories import make_claim, make_passage, make_snapshot

TEXT = (
    "Background. In a randomised trial of 400 patients, Drug A lowered blood pressure in "
    "adults with hypertension. Children were not studied."
)
QUOTE = (
    "In a randomised trial of 400 patients, Drug A lowered blood pressure in adults with "
    "hypertension."
)
ORIGINAL = "Drug A lowered blood pressure in adults with hypertension."


@pytest.fixture
def passed(run):
    return make_claim(
        run,
        ORIGINAL,
        passage=make_passage(make_snapshot(TEXT, title="Drug A trial")),
        quote=QUOTE,
        confidence=0.7,
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "narrowed",
    [
        "A narrative review states that Drug A lowered blood pressure in adults with hypertension.",
        "* Drug A lowered blood pressure in adults with hypertension.",
        "Drug A lowered **blood pressure** in adults with hypertension.",
    ],
)
def test_it_keeps_pass_for_a_faithful_rewording(passed, narrowed):
    result = reverify(passed, narrowed)
    assert result.status == "pass", result.rationale
    if "review states" in narrowed:  # the quote alone does not say who states it
        assert result.rationale.startswith("PASS as a restatement")
        assert ORIGINAL in result.rationale
        assert 'the reporting frame "A narrative review states" set aside' in result.rationale


@pytest.mark.django_db
@pytest.mark.parametrize(
    "narrowed",
    [
        "Drug A did not lower blood pressure in adults with hypertension.",
        "Drug A raised blood pressure in adults with hypertension.",
        "Drug A lowered blood pressure in adults and children with hypertension.",
        "Drug A lowered blood pressure in 40 patients with hypertension.",
    ],
)
def test_it_loses_pass_for_a_change_of_meaning(passed, narrowed):
    result = reverify(passed, narrowed)
    assert result.status != "pass", result.rationale
    assert not result.rationale.startswith("PASS as a restatement")


@pytest.mark.django_db
def test_it_judges_a_rewording_of_a_claim_that_did_not_pass_on_the_evidence_alone(run):
    claim = make_claim(
        run,
        ORIGINAL,
        status=Verdict.UNCERTAIN,
        passage=make_passage(make_snapshot(TEXT, title="Drug A trial")),
        quote=QUOTE,
    )
    narrowed = "A narrative review states that " + ORIGINAL[0].lower() + ORIGINAL[1:]
    result = reverify(claim, narrowed)
    assert result.status != "pass"  # nothing PASSed to restate
