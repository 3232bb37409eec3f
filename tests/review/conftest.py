"""Scenes for review tests: a plan the reviewer and a read-only researcher belong to."""

from __future__ import annotations

import pytest

from tests.factories import make_claim, make_plan, make_run
from tests.review.votes import add_support_votes


@pytest.fixture
def plan(author, reviewer, researcher):
    return make_plan(author, members=(reviewer, researcher))


@pytest.fixture
def run(plan):
    return make_run(plan)


@pytest.fixture
def flagged(run):
    """Three claims the gate waits for: an uncertain one, a flagged PASS and a FAIL."""
    return [
        make_claim(run, "Drug A lowers blood pressure in adults.", status="uncertain"),
        make_claim(run, "Drug A is safe for children.", flags=["single-source"]),
        make_claim(run, "Drug A cures hypertension.", status="fail", flags=["overstatement"]),
    ]


@pytest.fixture
def clean(run):
    """Two unflagged PASS claims, each supported by two families: eligible for bulk
    approval."""
    claims = [
        make_claim(run, "Drug A was approved in 2001."),
        make_claim(run, "Drug A is taken once daily."),
    ]
    for claim in claims:
        add_support_votes(claim)
    return claims
