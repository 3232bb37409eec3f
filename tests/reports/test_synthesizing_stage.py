"""The synthesizing stage: a worker builds the report, proves its exports, the run is done."""

from __future__ import annotations

import hashlib

import pytest

from reports.build import ReportRefused, check_request_report
from reports.export import FORMATS, do_export_report
from reports.integrity import report_document
from reports.models import Report
from research import runner
from research.models import RunState
from research.pipeline.records import parse_plan
from research.services.checkpoints import do_open_checkpoint
from research.stages import synthesize
from research.stages.base import StageContext
from review.services.decisions import do_approve_claim
from review.services.gate import gate_status
from tests.factories import make_run
from tests.reports.conftest import APPROVED, claim_from_source

pytestmark = pytest.mark.django_db


def requested(run, user):
    check_request_report(user, run, enqueue=False)
    run.refresh_from_db()
    assert run.state == RunState.SYNTHESIZING
    return run


def test_it_builds_the_report_in_the_stage_and_ends_the_run_done(scene, run, reviewer):
    requested(run, reviewer)
    assert not run.reports.exists()  # asking builds nothing
    result = runner.step(run.code)
    run.refresh_from_db()
    assert (result.state, result.again, run.state) == (RunState.DONE, False, RunState.DONE)
    assert run.finished_at is not None
    report = run.reports.get()
    assert report.created_by == reviewer
    cp = run.checkpoints.get(stage=RunState.SYNTHESIZING)
    assert (cp.status, cp.done, cp.total) == ("done", synthesize.STEPS, synthesize.STEPS)
    assert cp.notes["report"] == "version 1 (extractive)"
    assert cp.counters["claims"] == 2 and cp.counters["pdf_bytes"] > 1000
    assert cp.cursor["report"] == str(report.code)
    assert set(cp.cursor["exports"]) == set(FORMATS)
    assert not report.exports.exists()  # the stage's own export check records no download


def test_it_refuses_to_start_while_the_gate_is_closed(run, sub, reviewer):
    claim_from_source(run, "Drug A lowers pain.", title="T", sub=sub, status="uncertain")
    with pytest.raises(ReportRefused, match="gate is closed"):
        check_request_report(reviewer, run, enqueue=False)
    run.refresh_from_db()
    assert run.state == RunState.AWAITING_REVIEW


def test_it_goes_back_to_review_saying_why_when_the_gate_closed_meanwhile(
    scene, run, sub, reviewer
):
    requested(run, reviewer)
    claim_from_source(run, "Drug B lowers pain.", title="T2", sub=sub, status="uncertain")
    assert runner.step(run.code).state == RunState.AWAITING_REVIEW
    cp = run.checkpoints.get(stage=RunState.SYNTHESIZING)
    assert cp.notes["report"].startswith("not built: The review gate is closed")
    assert not run.reports.exists()


def test_it_builds_nothing_twice_when_a_worker_died_after_saving(scene, run, reviewer):
    requested(run, reviewer)
    cp = do_open_checkpoint(run, 0)
    ctx = StageContext(run=run, plan=parse_plan(run.plan_version.content), checkpoint=cp)
    assert synthesize.run(ctx) == RunState.DONE  # saved; the worker dies before moving on
    assert runner.step(run.code).state == RunState.DONE  # the retried job
    assert run.reports.count() == 1


def test_it_builds_a_new_version_of_a_done_run(scene, run, reviewer):
    requested(run, reviewer)
    runner.step(run.code)
    requested(run, reviewer)
    assert runner.step(run.code).state == RunState.DONE
    assert list(run.reports.values_list("version", flat=True)) == [1, 2]


def test_it_keeps_the_reviewed_run_when_the_build_crashes(scene, run, reviewer, monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("Chromium vanished")

    monkeypatch.setattr(synthesize, "render_checked", crash)
    requested(run, reviewer)
    assert runner.step(run.code).state == RunState.AWAITING_REVIEW
    cp = run.checkpoints.get(stage=RunState.SYNTHESIZING)
    assert cp.notes["report"] == "not built: RuntimeError: Chromium vanished"
    assert not Report.objects.exists()
    assert gate_status(run).open  # decisions intact: build again when fixed


def test_it_proves_the_very_bytes_later_downloads_get(scene, plan, run, sub, reviewer, author):
    """A re-run's report (Appendix E has a diff summary) renders the same after its
    document's trip through Postgres as when the stage checked it."""
    rerun = make_run(plan, previous_run=run)
    claim = claim_from_source(rerun, APPROVED[0], title="Aspirin trial again", sub=sub)
    do_approve_claim(reviewer, claim, claim.version)
    requested(rerun, reviewer)
    assert runner.step(rerun.code).state == RunState.DONE
    report = rerun.reports.get()
    assert report_document(report).appendix_e.summary
    checked = rerun.checkpoints.get(stage=RunState.SYNTHESIZING).cursor["exports"]
    for fmt, sha in checked.items():
        data = do_export_report(report, fmt, author).data
        assert hashlib.sha256(data).hexdigest() == sha, fmt
