"""Facets say only what a claim states: a negated property is never "no effect", only a null
result the finding states is (issue 26.6)."""

from __future__ import annotations

import pytest

from research.pipeline.claims.facets import (
    DECREASES,
    NO_EFFECT,
    NOT_ASSOCIATED,
    conflicting,
    direction_of,
    facets,
)

# Negated properties: no effect is estimated, so no direction, intervention or outcome.
PROPERTIES = [
    "Extension modules built for the default build are not ABI compatible with the "
    "free-threaded build.",
    "The free-threaded build no longer supports the stable ABI.",
    "Cholecalciferol is not soluble in water.",
    "In most persons, these concentrations could not be reached with the currently "
    "recommended intakes of 200 and 600 IU vitamin D/d for younger and older adults.",
    "The benefit could not be explained by adherence.",
]
# Null results the finding states, an effect it reports absent included.
NULLS = [
    "Minimum wage increases had no significant effect on teen employment.",
    "Fracture rates did not differ between the groups.",
    "There was no significant difference in mortality between the groups.",
    "Aspirin did not significantly reduce fever.",
    "Vitamin D did not affect the rate of falls.",
    "Tariffs did not reduce imports from the region.",
]


@pytest.mark.parametrize("text", PROPERTIES)
def test_a_negated_property_states_no_direction_and_no_effect_split(text):
    stated = facets(text)
    assert (stated.direction, stated.intervention, stated.outcome) == ("", "", ""), text


@pytest.mark.parametrize("text", NULLS)
def test_only_a_stated_null_result_is_no_effect(text):
    assert direction_of(text) == NO_EFFECT


def test_an_effect_reported_absent_keeps_its_parts_and_contests_a_reduction():
    absent = facets("Tariffs did not reduce imports from the region.")
    assert (absent.intervention, absent.outcome, absent.direction) == (
        "Tariffs",
        "imports",
        NO_EFFECT,
    )
    assert conflicting(DECREASES, absent.direction)
    assert direction_of("Static typing was not associated with fewer defects.") == (NOT_ASSOCIATED)
    # "No longer" before a property is no null result; before an effect verb it reports the
    # effect absent.
    assert direction_of("The free-threaded build no longer supports the stable ABI.") == ""
    assert direction_of("The drug no longer lowers blood pressure after a year.") == NO_EFFECT
