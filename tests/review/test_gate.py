from __future__ import annotations

import pytest

from ledger.models import Claim, ReviewState, Snapshot
from research.models import RunState
from review.models import GatePolicy
from review.services.capsules import approved_capsules
from review.services.decisions import (
    DecisionRefused,
    do_approve_claim,
    do_bulk_approve,
    do_reject_claim,
)
from review.services.gate import gate_status


@pytest.mark.django_db
def test_it_blocks_until_every_flagged_claim_has_a_decision(run, flagged, clean, reviewer):
    status = gate_status(run)
    assert not status.open
    assert status.total == 5
    assert status.flagged == 3
    assert set(status.blocking) == {c.code for c in flagged}
    assert status.bulk_eligible == 2

    do_approve_claim(
        reviewer, flagged[0], flagged[0].version, note="read the source: it states this"
    )
    do_approve_claim(
        reviewer, flagged[1], flagged[1].version, note="read the source: it states this"
    )
    assert not gate_status(run).open
    do_reject_claim(reviewer, flagged[2], flagged[2].version, "overstated")

    status = gate_status(run)
    assert status.open
    assert status.blocking == []
    assert status.percent == 100
    assert (status.approved, status.rejected) == (2, 1)


@pytest.mark.django_db
def test_it_stays_closed_while_the_run_is_still_verifying(run, clean):
    run.state = RunState.VERIFYING
    run.save(update_fields=["state"])
    status = gate_status(run)
    assert not status.open
    assert not status.run_ready
    assert "verification" in status.reason


@pytest.mark.django_db
def test_it_refuses_to_approve_a_failed_claim_without_a_written_reason(flagged, reviewer):
    failed = flagged[2]
    with pytest.raises(DecisionRefused, match="overrides the verifiers: write why"):
        do_approve_claim(reviewer, failed, failed.version, note="ok")
    failed.refresh_from_db()
    assert failed.review_state == ReviewState.UNREVIEWED
    assert failed.decisions.count() == 0


@pytest.mark.django_db
def test_it_bulk_approves_only_unflagged_pass_claims(run, flagged, clean, reviewer):
    assert do_bulk_approve(reviewer, run) == 2
    states = dict(Claim.objects.filter(run=run).values_list("code", "review_state"))
    assert {states[c.code] for c in clean} == {ReviewState.APPROVED}
    assert {states[c.code] for c in flagged} == {ReviewState.UNREVIEWED}
    for claim in clean:
        assert claim.decisions.get().reviewer == reviewer
    assert do_bulk_approve(reviewer, run) == 0


@pytest.mark.django_db
def test_it_refuses_bulk_approval_when_the_policy_forbids_it(plan, run, clean, reviewer):
    GatePolicy.objects.create(plan=plan, allow_bulk_approve=False)
    with pytest.raises(DecisionRefused, match="bulk"):
        do_bulk_approve(reviewer, run)
    assert gate_status(run).approved == 0


@pytest.mark.django_db
def test_it_hands_synthesis_only_approved_capsules(run, flagged, clean, reviewer):
    do_approve_claim(
        reviewer, flagged[0], flagged[0].version, note="read the source: it states this"
    )
    do_reject_claim(reviewer, flagged[1], flagged[1].version, "unsupported")
    do_bulk_approve(reviewer, run)

    capsules = approved_capsules(run)

    codes = {c.code for c in capsules}
    assert codes == {str(flagged[0].code), str(clean[0].code), str(clean[1].code)}
    capsule = next(c for c in capsules if c.code == str(flagged[0].code))
    assert capsule.approved_by == "reviewer"
    assert capsule.evidence
    quote = capsule.evidence[0]
    snapshot = Snapshot.objects.get(code=quote.snapshot_code)
    assert snapshot.text[quote.quote_start : quote.quote_end] == quote.quote
    assert flagged[0].text in quote.quote


@pytest.mark.django_db
def test_it_leaves_out_a_claim_whose_state_disagrees_with_its_history(run, clean):
    Claim.objects.filter(pk=clean[0].pk).update(review_state=ReviewState.APPROVED)
    assert approved_capsules(run) == []


@pytest.mark.django_db
def test_it_records_a_rejection_as_a_dropped_disposition(flagged, reviewer):
    claim = flagged[1]
    do_reject_claim(reviewer, claim, claim.version, "other", "Source is a press release")
    claim.refresh_from_db()
    assert claim.disposition == "dropped"
    assert "press release" in claim.disposition_reason
    assert claim.dispositions.get().stage == "review"


@pytest.mark.django_db
def test_it_requires_an_explanation_for_other(flagged, reviewer):
    with pytest.raises(DecisionRefused, match="Explain"):
        do_reject_claim(reviewer, flagged[1], flagged[1].version, "other", "  ")
    with pytest.raises(DecisionRefused, match="reason"):
        do_reject_claim(reviewer, flagged[1], flagged[1].version, "made-up")
