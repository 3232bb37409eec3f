from __future__ import annotations

import hashlib
import zlib

import pytest
from django.utils import timezone

from ledger.models import Snapshot, Verdict
from reports.build import do_build_report
from review.diff import diff_runs, previous_run
from review.services.decisions import do_approve_claim
from tests.factories import make_claim, make_passage, make_run, make_snapshot

A = "Aspirin reduces the risk of a second heart attack in adults."
B = "Regular exercise may lower blood pressure in older adults."


def recapture(snapshot, text):
    """The same source captured again with different content: a new immutable snapshot."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Snapshot.objects.create(
        source=snapshot.source,
        raw=zlib.compress(text.encode()),
        raw_sha256=digest,
        text=text,
        text_sha256=digest,
        content_type="text/plain",
        fetched_at=timezone.now(),
        extractor="test",
    )


@pytest.fixture
def two_runs(plan, run, sub, reviewer):
    """Run 1 reviewed; source 2 then changed; run 2 re-runs the plan over it."""
    s1 = make_snapshot(f"Trial report. {A} Ends here.", canonical_id="url:https://a.example/1")
    s2 = make_snapshot(f"Cohort study. {B} Funded by X.", canonical_id="url:https://b.example/2")
    p1 = make_passage(s1)
    old = [
        make_claim(run, A, quote=A, passage=p1, subquestion=sub),
        make_claim(run, B, quote=B, passage=make_passage(s2), subquestion=sub),
    ]
    for claim in old:
        do_approve_claim(reviewer, claim, claim.version)
    s2b = recapture(s2, f"Cohort study, corrected. {B} Funded by Y.")
    rerun = make_run(plan, previous_run=run)
    sub2 = rerun.plan_version.subquestions.first()
    new = [
        make_claim(rerun, A, quote=A, passage=p1, subquestion=sub2),
        make_claim(rerun, B, quote=B, passage=make_passage(s2b), subquestion=sub2),
    ]
    return {"old": old, "new": new, "rerun": rerun, "s2": s2, "s2b": s2b}


@pytest.mark.django_db
def test_it_shows_exactly_the_changed_source_and_flags_its_decisions(run, two_runs):
    diff = diff_runs(run, two_runs["rerun"])
    old_a, old_b = two_runs["old"]
    new_b = two_runs["new"][1]
    assert (diff.added, diff.removed, diff.text_changed, diff.verdict_flips) == ([], [], [], [])
    assert diff.sources_gone == [] and diff.sources_new == []
    [change] = diff.sources_changed
    assert change.canonical_id == "url:https://b.example/2"
    assert change.old_sha256 == [two_runs["s2"].text_sha256]
    assert change.new_sha256 == [two_runs["s2b"].text_sha256]
    assert change.claims == [str(old_b.code)]
    assert change.new_claims == [str(new_b.code)]
    assert [e.claim for e in diff.evidence_changes] == [str(new_b.code)]
    [flag] = diff.rereview
    assert flag.claim == str(old_b.code)
    assert flag.action == "approve"
    assert flag.decision == str(old_b.decisions.get().code)
    assert any("url:https://b.example/2 changed" in r for r in flag.reasons)
    assert str(old_a.code) not in {f.claim for f in diff.rereview}


@pytest.mark.django_db
def test_it_finds_the_previous_run_of_the_plan(run, two_runs):
    assert previous_run(two_runs["rerun"]) == run
    assert previous_run(run) is None


@pytest.mark.django_db
def test_it_reports_added_removed_changed_and_flipped_claims(plan, run, sub):
    make_claim(run, "Old claim that disappears entirely.", subquestion=sub)
    make_claim(run, "Drug Z lowers pain in adults with arthritis.", subquestion=sub)
    q = "Drug Q is taken twice daily."
    pq = make_passage(make_snapshot(f"Label. {q} Store cold."))
    make_claim(run, q, quote=q, passage=pq, subquestion=sub)
    rerun = make_run(plan)
    sub2 = rerun.plan_version.subquestions.first()
    make_claim(rerun, "A brand new finding about sleep.", subquestion=sub2)
    make_claim(rerun, "Drug Z lowers pain in older adults with arthritis.", subquestion=sub2)
    make_claim(rerun, q, quote=q, passage=pq, subquestion=sub2, status=Verdict.FAIL)
    diff = diff_runs(run, rerun)
    assert [c.text for c in diff.added] == ["A brand new finding about sleep."]
    assert [c.text for c in diff.removed] == ["Old claim that disappears entirely."]
    assert [(p.old.text, p.new.text) for p in diff.text_changed] == [
        (
            "Drug Z lowers pain in adults with arthritis.",
            "Drug Z lowers pain in older adults with arthritis.",
        )
    ]
    assert [(p.old.status, p.new.status) for p in diff.verdict_flips] == [("pass", "fail")]


@pytest.mark.django_db
def test_it_puts_the_diff_in_appendix_e_without_unapproved_text(two_runs, reviewer, author):
    rerun = two_runs["rerun"]
    new_a = two_runs["new"][0]
    do_approve_claim(reviewer, new_a, new_a.version)
    report = do_build_report(rerun, author)
    appendix = report.outline["appendix_e"]
    assert appendix["summary"]["sources_changed"] == 1
    assert appendix["summary"]["decisions_to_rereview"] == 1
    assert any("source changed" in e for e in appendix["entries"])
    assert B not in report.markdown  # unreviewed in this run: withheld even in the diff
    assert any("re-review the approve by reviewer" in e for e in appendix["entries"])
