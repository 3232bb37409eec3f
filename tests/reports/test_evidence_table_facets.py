"""The evidence table shows a facet only where the claim, or a study's own text, states it
plainly; a negated property is never "no effect" (issue 26.6)."""

from __future__ import annotations

import pytest

from ledger.models import SourceProfile
from reports.build import do_build_report
from reports.integrity import report_document
from review.services.decisions import do_approve_claim, do_narrow_claim
from tests.reports.conftest import claim_from_source

pytestmark = pytest.mark.django_db

MINED = "Extension modules are not compatible with the free-threaded build."
NARROWED = (
    "Extension modules built for the default CPython 3.13 build are not ABI compatible "
    "with the free-threaded build."
)
TRIAL = "In a second trial, aspirin did not reduce fever in adults."


def row_of(document, title):
    [row] = [r for r in document.evidence_table if r.title == title]
    return row


def test_a_narrowed_negation_shows_dashes_not_no_effect(run, sub, reviewer, author):
    claim = claim_from_source(run, MINED, title="CPython docs", sub=sub)
    # A guide is no study of people: "children" (child processes) is not who it studied.
    source = claim.evidence.get().snapshot.source
    SourceProfile.objects.create(source=source, design="", humans=None, population="children")
    do_narrow_claim(reviewer, claim, claim.version, NARROWED, reason="narrower")
    claim.refresh_from_db()
    do_approve_claim(reviewer, claim, claim.version, "the guide states it plainly")
    report = do_build_report(run, author)
    row = row_of(report_document(report), "CPython docs")

    assert (row.population, row.intervention, row.outcome, row.direction) == ("", "", "", "")
    table = report.markdown.split("Evidence table", 2)[-1].split("\n\n## ", 1)[0]
    assert "no effect" not in table and "compatible with" not in table.split("|CPython")[0]
    assert "| — | — | — | — |" in table


def test_a_study_of_people_shows_its_population_and_an_effect_reported_absent(
    run, sub, reviewer, author
):
    claim = claim_from_source(run, TRIAL, title="Fever trial", sub=sub)
    source = claim.evidence.get().snapshot.source
    SourceProfile.objects.create(source=source, design="rct", humans=True, population="adults")
    do_approve_claim(reviewer, claim, claim.version)
    row = row_of(report_document(do_build_report(run, author)), "Fever trial")

    assert (row.population, row.intervention, row.outcome) == ("adults", "aspirin", "fever")
    assert row.direction == "no effect"  # "did not reduce": the effect reported absent


def test_a_reviewers_reporting_frame_is_not_the_intervention(run, sub, reviewer, author):
    """Re-running the vitamin D question, a narrowing that only added attribution ("The
    source states that …") put the frame in the table: intervention "The source states that
    vitamin D insufficiency and deficiency". The frame is set aside, as re-verification
    sets it aside; the reviewer's wording still stands in the claim register."""
    claim = claim_from_source(run, "Aspirin reduced fever in adults.", title="Fever trial", sub=sub)
    framed = "The trial report states that aspirin reduced fever in adults."
    do_narrow_claim(reviewer, claim, claim.version, framed, reason="attribution")
    claim.refresh_from_db()
    do_approve_claim(reviewer, claim, claim.version, "the trial states it plainly")
    report = do_build_report(run, author)
    row = row_of(report_document(report), "Fever trial")

    assert (row.intervention, row.outcome) == ("Aspirin", "fever")  # the clause's own start
    assert framed in report.markdown  # the approved wording, as approved
