from __future__ import annotations

import hashlib

import pytest

from ledger.models import Verdict
from reports.build import ReportRefused, do_build_report
from review.services.decisions import do_approve_claim, do_reject_claim
from tests.reports.conftest import APPROVED, WITHHELD, claim_from_source


@pytest.mark.django_db
def test_it_refuses_a_report_while_the_gate_is_closed(run, sub, author):
    claim_from_source(
        run, "Drug A lowers blood pressure.", title="Trial", sub=sub, status=Verdict.UNCERTAIN
    )
    with pytest.raises(ReportRefused, match="gate is closed"):
        do_build_report(run, author)
    assert not run.reports.exists()


@pytest.mark.django_db
def test_it_builds_a_report_only_from_approved_capsules(scene, run, author):
    report = do_build_report(run, author)
    approved_codes = [str(c.code) for c in scene["approved"]]
    assert report.version == 1
    assert sorted(report.claim_codes) == sorted(approved_codes)
    assert report.synthesizer == "extractive"
    assert report.content_hash == hashlib.sha256(report.markdown.encode()).hexdigest()
    doc = report.outline
    prose = [s["text"] for sec in doc["sections"] for s in sec["sentences"]]
    assert prose[0] == APPROVED[0]
    assert prose[1].startswith(APPROVED[1].rstrip("."))
    assert "scope: adults over 65" in prose[1]
    for text in WITHHELD:
        assert text not in report.markdown


@pytest.mark.django_db
def test_it_lists_excluded_claims_with_reasons_but_without_their_text(scene, run, author):
    doc = do_build_report(run, author).outline
    rows = {row["code"]: row for row in doc["appendix_a"]}
    rejected = rows[str(scene["rejected"].code)]
    assert rejected["review_state"] == "rejected"
    assert any("unsupported" in r for r in rejected["reasons"])
    failed = rows[str(scene["failed"].code)]
    assert any("FAIL" in r for r in failed["reasons"])
    assert any("two trials" in r for r in failed["reasons"])
    unreviewed = rows[str(scene["unreviewed"].code)]
    assert unreviewed["reasons"] == ["not reviewed before the report was built"]
    assert all("text" not in row for row in doc["appendix_a"])


@pytest.mark.django_db
def test_it_numbers_versions_per_run(scene, run, author):
    first = do_build_report(run, author)
    second = do_build_report(run, author)
    assert (first.version, second.version) == (1, 2)
    assert first.code != second.code
    assert first.content_hash != second.content_hash  # the header names the version


@pytest.mark.django_db
def test_it_fills_the_evidence_table_and_audit_log(scene, run, author):
    doc = do_build_report(run, author).outline
    assert [e["quote"] for e in doc["appendix_b"]] == APPROVED
    for row in doc["appendix_b"]:
        assert row["quote_end"] - row["quote_start"] == len(row["quote"])
        assert len(row["snapshot_sha256"]) == 64
    actions = sorted(d["action"] for d in doc["appendix_c"])
    assert actions == ["approve", "approve", "reject", "reject"]
    assert [b["number"] for b in doc["bibliography"]] == [1, 2]
    assert doc["appendix_d"]["plan_version_hash"] == run.plan_version.content_hash
    assert doc["appendix_e"]["against_run"] == ""


@pytest.mark.django_db
def test_it_redacts_an_excluded_claims_text_from_reasons(run, sub, reviewer, author):
    approved = claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub)
    rejected = claim_from_source(run, "Garlic prevents flu.", title="Garlic", sub=sub)
    do_approve_claim(reviewer, approved, approved.version)
    do_reject_claim(
        reviewer, rejected, rejected.version, "other", "It says Garlic prevents flu. No trial."
    )
    report = do_build_report(run, author)
    assert "Garlic prevents flu" not in report.markdown
    reasons = report.outline["appendix_a"][0]["reasons"]
    assert any("It says [withheld claim text]. No trial." in r for r in reasons), reasons
