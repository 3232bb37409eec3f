"""Appendix A lists the candidates mining set aside; their wording never leaves the server."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from reports.build import do_build_report
from reports.export import ExportRefused, do_export_report
from reports.exports.document import METHOD, leak_matcher
from reports.exports.markdown import md_escape
from reports.inputs import withheld_texts
from reports.integrity import report_document
from review.services.decisions import do_approve_claim
from tests.factories import make_candidate, make_passage, make_plan, make_run, make_snapshot
from tests.reports.bundles import bundle_problems
from tests.reports.conftest import APPROVED, REJECTED, claim_from_source

QUESTION = "Does aspirin prevent strokes in every adult over forty?"
AIM = "This review aimed to pool every randomised trial of aspirin."
UNBOUND = "Aspirin halves the stroke rate in smokers"


@pytest.fixture
def set_aside(run, sub):
    """Two candidates dropped at mining: one bound to its sentence, one whose anchor moved."""
    snapshot = make_snapshot(f"Background. {QUESTION} {AIM} Methods follow.", title="Review")
    passage = make_passage(snapshot)
    return [
        make_candidate(run, QUESTION, passage=passage, subquestion=sub),
        make_candidate(
            run,
            UNBOUND,
            reason="its source sentence no longer matches the snapshot text",
            subquestion=sub,
        ),
    ]


@pytest.fixture
def report(scene, set_aside, run, author):
    return do_build_report(run, author)


def _exports(report, author):
    return {fmt: do_export_report(report, fmt, author).data for fmt in ("md", "html", "zip")}


@pytest.mark.django_db
def test_it_lists_candidates_set_aside_at_mining_in_appendix_a(report, set_aside):
    rows = report.outline["appendix_a_set_aside"]
    assert [row["label"] for row in rows] == ["M1", "M2"]
    question, unbound = rows
    assert question["reason"] == "a question, not a claim"
    assert question["subquestion"] == "sq1"
    assert question["snapshot_sha256"] == set_aside[0].snapshot.text_sha256
    assert (question["quote_start"], question["quote_end"]) == (
        set_aside[0].quote_start,
        set_aside[0].quote_end,
    )
    assert unbound["reason"] == "its source sentence no longer matches the snapshot text"
    assert unbound["snapshot_sha256"] == "" and unbound["quote_start"] is None
    assert all("text" not in row and "quote" not in row for row in rows)


@pytest.mark.django_db
def test_it_prints_the_set_aside_candidates_counted_by_reason_in_markdown_and_html(
    report, author, set_aside
):
    texts = _exports(report, author)
    for fmt in ("md", "html"):
        text = texts[fmt].decode()
        appendix = text[text.index("Set aside at mining") :]
        assert "M1" in appendix and "M2" in appendix, fmt
        assert "a question, not a claim" in appendix, fmt
        assert "no longer matches the snapshot text" in appendix, fmt
    # Each candidate's source and offsets: in the bundle, not in the printed appendix.
    [row] = [
        r
        for r in json.loads(_zip_texts(texts["zip"])["claims.json"])["set_aside_at_mining"]
        if r["label"] == "M1"
    ]
    assert row["snapshot_sha256"] == set_aside[0].snapshot.text_sha256
    assert (row["quote_start"], row["quote_end"]) == (
        set_aside[0].quote_start,
        set_aside[0].quote_end,
    )
    for name, text in _zip_texts(texts["zip"]).items():
        for wording in (QUESTION, UNBOUND, UNBOUND.lower()):
            assert wording not in text, (name, wording)
    for fmt in ("md", "html"):
        assert QUESTION not in texts[fmt].decode() and UNBOUND not in texts[fmt].decode()


@pytest.mark.django_db
def test_it_puts_the_set_aside_candidates_in_a_bundle_that_verifies(report, author, tmp_path):
    data = do_export_report(report, "zip", author).data
    claims = json.loads(_zip_texts(data)["claims.json"])
    assert [row["label"] for row in claims["set_aside_at_mining"]] == ["M1", "M2"]
    path = tmp_path / "bundle.zip"
    path.write_bytes(data)
    assert bundle_problems(path) == []


@pytest.mark.django_db
def test_it_refuses_an_export_whose_body_states_a_set_aside_candidate(report, run, author):
    # A candidate recorded after the report whose wording the report prints (its method).
    make_candidate(run, METHOD[2], reason="describes the study's aim or method, not a finding")
    for fmt in ("md", "html", "zip"):
        with pytest.raises(ExportRefused) as refused:
            do_export_report(report, fmt, author)
        assert "excluded claim or candidate" in str(refused.value), fmt


@pytest.mark.django_db
def test_it_withholds_candidate_wordings_that_did_not_become_reported_claims(scene, run, sub):
    rejected = scene["rejected"]
    approved = scene["approved"][0]
    make_candidate(run, QUESTION, subquestion=sub)
    make_candidate(run, "Vitamin C clears any cold in two days.", state="merged", claim=rejected)
    make_candidate(
        run, "Aspirin cuts second heart attacks in adults.", state="merged", claim=approved
    )
    make_candidate(run, "reduces strokes", reason="too short to state a fact")
    # Dropped under one subquestion, kept as a reported claim under another.
    make_candidate(run, approved.text, reason="over the claim budget of 25 for this subquestion")
    withheld = withheld_texts(run, {str(c.code) for c in scene["approved"]})
    assert QUESTION in withheld and REJECTED in withheld
    assert "Vitamin C clears any cold in two days." in withheld
    assert "Aspirin cuts second heart attacks in adults." not in withheld
    assert "reduces strokes" not in withheld
    assert approved.text not in withheld


@pytest.mark.django_db
def test_it_finds_a_set_aside_wording_in_a_body_but_not_in_the_plan_it_came_from(author, reviewer):
    """A question a source asks may be the plan's own question: printing that is no leak."""
    plan = make_plan(author, question=QUESTION, members=(reviewer,))
    run = make_run(plan)
    sub = run.plan_version.subquestions.first()
    claim = claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub)
    do_approve_claim(reviewer, claim, claim.version)
    make_candidate(run, QUESTION, subquestion=sub)
    make_candidate(run, AIM, reason="describes the study's aim or method, not a finding")
    report = do_build_report(run, author)
    withheld = withheld_texts(run, set(report.claim_codes))
    matcher = leak_matcher(report_document(report), withheld)
    assert matcher.first_leak(report.markdown) is None
    assert matcher.first_leak(f"{report.markdown} {AIM}") == AIM
    assert md_escape(QUESTION) in report.markdown  # the title: exported all the same
    assert do_export_report(report, "md", author).data


def _zip_texts(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            name: archive.read(name).decode()
            for name in archive.namelist()
            if not name.startswith("snapshots/")
        }
