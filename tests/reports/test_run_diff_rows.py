"""Stored RunDiff rows and decision carry-over, on hand-made ledgers (edge cases)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import Pool, Relation, ReviewState, Verdict
from research.stages.rundiff import diff_and_carry_over
from review import rundiffs
from review.diff import RunDiffRecord
from review.models import ReviewDecision, RunDiff
from review.records import Reverification
from review.services import decisions
from review.services.decisions import do_approve_claim, do_narrow_claim, do_reject_claim
from tests.factories import make_claim, make_passage, make_run, make_snapshot
from tests.reports.test_diff import A, B, recapture

pytestmark = pytest.mark.django_db
C = "Vitamin K supplements lower fracture risk in women."


@pytest.fixture
def reviewed(plan, run, sub, reviewer):
    """Run 1: A approved, B approved (its source is recaptured later), C rejected."""
    s1 = make_snapshot(f"Trial report. {A} Ends here.", canonical_id="url:https://a.example/1")
    s2 = make_snapshot(f"Cohort study. {B} Funded by X.", canonical_id="url:https://b.example/2")
    s3 = make_snapshot(f"Blog post. {C} Says a blog.", canonical_id="url:https://c.example/3")
    passages = {"a": make_passage(s1), "b": make_passage(s2), "c": make_passage(s3)}
    claims = {
        "a": make_claim(run, A, quote=A, passage=passages["a"], subquestion=sub),
        "b": make_claim(run, B, quote=B, passage=passages["b"], subquestion=sub),
        "c": make_claim(
            run, C, quote=C, passage=passages["c"], subquestion=sub, status=Verdict.FAIL,
            relation=Relation.CONTRADICTS,
        ),
    }  # fmt: skip
    do_approve_claim(reviewer, claims["a"], claims["a"].version)
    do_approve_claim(reviewer, claims["b"], claims["b"].version)
    do_reject_claim(reviewer, claims["c"], claims["c"].version, "contradicted")
    return {"passages": passages, "claims": claims, "s2": s2}


def rerun_of(plan, run, reviewed, *, b_snapshot=None, c_relation=Relation.CONTRADICTS):
    rerun = make_run(plan, previous_run=run, state="verifying")
    sub = rerun.plan_version.subquestions.first()
    p = reviewed["passages"]
    pb = make_passage(b_snapshot) if b_snapshot else p["b"]
    new = {
        "a": make_claim(rerun, A, quote=A, passage=p["a"], subquestion=sub),
        "b": make_claim(rerun, B, quote=B, passage=pb, subquestion=sub),
        "c": make_claim(
            rerun, C, quote=C, passage=p["c"], subquestion=sub, status=Verdict.FAIL,
            relation=c_relation,
        ),
    }  # fmt: skip
    return rerun, new


def carry(run) -> RunDiffRecord:
    record = diff_and_carry_over(run)
    assert record is not None
    return record


def test_it_stores_the_diff_and_carries_only_unchanged_decisions(plan, run, reviewed):
    s2b = recapture(reviewed["s2"], f"Cohort study, corrected. {B} Funded by Y.")
    rerun, new = rerun_of(plan, run, reviewed, b_snapshot=s2b)
    record = carry(rerun)
    row = RunDiff.objects.get(run=rerun)
    assert (row.against, row.carried_over, row.needs_review) == (run, 2, 1)
    assert [n.claim for n in record.needs_review] == [str(new["b"].code)]
    [why] = record.needs_review[0].reasons
    assert (
        why
        == "evidence changed: a supporting quote is gone: url:https://b.example/2 (source changed)"
    )
    for key, state in (("a", ReviewState.APPROVED), ("b", ReviewState.UNREVIEWED)):
        new[key].refresh_from_db()
        assert new[key].review_state == state
    new["c"].refresh_from_db()
    assert new["c"].review_state == ReviewState.REJECTED
    carried = new["c"].decisions.get()
    assert carried.carried_from == reviewed["claims"]["c"].decisions.get()
    assert carried.reason_code == "contradicted"
    assert "carried over from run" in new["c"].disposition_reason


def test_it_asks_again_when_the_approved_quote_comes_from_a_source_that_changed(
    plan, run, reviewed
):
    """The new run still quotes the reviewed snapshot of B's source, and also its newer
    capture: the source changed, so the approval that rested on it does not carry."""
    s2b = recapture(reviewed["s2"], f"Cohort study, corrected. {B} Funded by Y.")
    rerun, new = rerun_of(plan, run, reviewed)
    passage = make_passage(s2b)
    start = s2b.text.index(B)
    new["b"].evidence.create(
        passage=passage,
        snapshot=s2b,
        pool=Pool.SUPPORT,
        relation=Relation.SUPPORTS,
        quote=B,
        quote_start=start,
        quote_end=start + len(B),
        passage_fingerprint=passage.fingerprint,
        score=0.9,
    )
    record = carry(rerun)
    assert [(n.claim, n.reasons) for n in record.needs_review] == [
        (
            str(new["b"].code),
            [
                "evidence changed: a supporting quote's source changed since: "
                "url:https://b.example/2"
            ],
        )
    ]
    assert sorted(c.claim for c in record.carried_over) == sorted(
        str(new[k].code) for k in ("a", "c")
    )


def test_it_carries_nothing_twice_when_the_step_is_retried(plan, run, reviewed):
    rerun, _ = rerun_of(plan, run, reviewed)
    first = carry(rerun)
    again = carry(rerun)
    assert len(first.carried_over) == len(again.carried_over) == 3
    assert ReviewDecision.objects.filter(claim__run=rerun).count() == 3
    assert RunDiff.objects.filter(run=rerun).count() == 1


def test_it_asks_again_when_a_rejected_claim_gains_support(plan, run, reviewed):
    rerun, new = rerun_of(plan, run, reviewed, c_relation=Relation.SUPPORTS)
    record = carry(rerun)
    [row] = record.needs_review
    assert row.claim == str(new["c"].code)
    assert row.reasons == [
        "evidence changed: a contradicting quote is gone: url:https://c.example/3",
        "evidence changed: a supporting quote is new: url:https://c.example/3",
    ]


def reverify_as(monkeypatch, data):
    """Re-verification (narrowing and carry-over) finds ``data``, a stored record's JSON."""
    found = Reverification.from_json(data)
    for module in (decisions, rundiffs):
        monkeypatch.setattr(module, "reverify", lambda claim, narrowed: found)


def test_it_re_verifies_a_carried_narrowing_and_refuses_when_it_differs(
    plan, run, sub, reviewer, monkeypatch
):
    text = "Aspirin reduces the risk of a second heart attack in adults over 50 in trials."
    passage = make_passage(make_snapshot(f"Report. {text} End."))
    old = make_claim(run, text, quote=text, passage=passage, subquestion=sub, status="uncertain")
    passing = {"available": True, "status": "pass", "rationale": "quoted", "confidence": 0.9}
    reverify_as(monkeypatch, passing)
    do_narrow_claim(reviewer, old, old.version, A)
    old.refresh_from_db()
    do_approve_claim(reviewer, old, old.version)
    rerun = make_run(plan, previous_run=run, state="verifying")
    sub2 = rerun.plan_version.subquestions.first()
    new = make_claim(rerun, text, quote=text, passage=passage, subquestion=sub2, status="uncertain")
    failing = {"available": True, "status": "fail", "rationale": "", "confidence": 0.1}
    reverify_as(monkeypatch, failing)
    record = carry(rerun)
    assert [r.reasons for r in record.needs_review] == [
        ["the narrowed text re-verifies as FAIL on this run's evidence (it was PASS)"]
    ]
    reverify_as(monkeypatch, passing)
    record = carry(rerun)
    assert record.needs_review == [] and [c.actions for c in record.carried_over] == [
        ["narrow", "approve"]
    ]
    new.refresh_from_db()
    assert (new.text, new.review_state, new.status) == (A, ReviewState.APPROVED, "pass")


def test_it_links_the_stored_diff_from_the_run_page(client, author, plan, run, reviewed):
    rerun, new = rerun_of(plan, run, reviewed)
    carry(rerun)
    client.force_login(author)
    page = client.get(rerun.get_absolute_url()).content.decode()
    assert "3 claims keep earlier decisions, 0 to review" in page
    page = client.get(reverse("review-diff-runs", args=[rerun.code])).content.decode()
    assert 'id="diff-carried"' in page and A in page and "approve" in page
    assert "None: every claim keeps its earlier decision." in page


def test_it_shows_carried_decisions_in_the_audit_trail_and_on_the_claim(
    client, author, plan, run, reviewed
):
    rerun, new = rerun_of(plan, run, reviewed)
    carry(rerun)
    client.force_login(author)
    audit = client.get(reverse("review-show-audit", args=[rerun.code])).content.decode()
    assert audit.count("carried over from") == 3
    page = client.get(new["a"].get_absolute_url()).content.decode()
    assert "Carried over unchanged from" in page
    assert reviewed["claims"]["a"].get_absolute_url() in page
