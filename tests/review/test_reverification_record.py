"""The re-verification record: what ``reverify`` returns, what a narrow decision stores
(its JSON, in the shape stored before the record existed) and what readers read back."""

from __future__ import annotations

from typing import Any

import pytest

from ledger.models import Verdict
from research.pipeline.verify.records import ClaimVerdict, Status, Vote
from review.models import ReviewDecision
from review.records import Reverification, ReverificationVote
from review.services import decisions
from review.services.decisions import do_narrow_claim
from tests.factories import make_claim

# A row as ``reverification_record`` wrote it before the typed record (a real verdict).
STORED: dict[str, Any] = {
    "available": True,
    "status": "pass",
    "rationale": "PASS: two families support it.",
    "confidence": 0.62,
    "fingerprint": "f" * 16,
    "flags": ["single-source"],
    "votes": [
        {
            "verifier": "rules",
            "family": "rules",
            "verdict": "supports",
            "score": 0.9,
            "quote": "Drug A lowered blood pressure.",
            "rationale": "quoted",
        },
        {
            "verifier": "learned-minilm",
            "family": "learned",
            "verdict": "supports",
            "score": 0.71,
            "quote": "",
            "rationale": "",
        },
    ],
    "notes": {"nli": "not configured"},
}
NOT_REVERIFIED: dict[str, Any] = {
    "available": False,
    "reason": "the verifiers could not run: timeout",
}


def test_it_reads_a_stored_row_of_the_old_shape():
    record = Reverification.from_json(STORED)
    assert (record.available, record.status, record.confidence) == (True, "pass", 0.62)
    assert record.rationale == "PASS: two families support it."
    assert record.flags == ("single-source",)
    assert record.votes[1] == ReverificationVote(
        verifier="learned-minilm", family="learned", verdict="supports", score=0.71
    )
    assert record.notes == {"nli": "not configured"}
    assert record.reason == ""


def test_it_writes_back_the_shape_it_read():
    assert Reverification.from_json(STORED).to_json() == STORED
    assert Reverification.from_json(NOT_REVERIFIED).to_json() == NOT_REVERIFIED
    assert Reverification.unavailable("timeout").to_json() == {
        "available": False,
        "reason": "timeout",
    }


def test_it_round_trips_a_record():
    record = Reverification.from_json(STORED)
    assert Reverification.from_json(record.to_json()) == record


def test_it_reads_a_decision_that_re_verified_nothing_as_unavailable():
    record = Reverification.from_json({})
    assert (record.available, record.status, record.reason) == (False, "", "")


def test_it_records_a_verdict_as_the_old_summary_did():
    vote = Vote(
        verifier="rules",
        family="rules",
        claim_id="c1",
        evidence_id="e1",
        verdict="supports",
        score=0.9,
        claim_fingerprint="f" * 16,
        evidence_fingerprint="e" * 16,
        quote="Drug A lowered blood pressure.",
        rationale="quoted",
    )
    verdict = ClaimVerdict(
        claim_id="c1",
        claim_fingerprint="f" * 16,
        status=Status.PASS,
        rationale="PASS: two families support it.",
        confidence=0.62,
        flags=["single-source"],
        votes=[vote, vote],
        notes={"nli": "not configured"},
    )
    data = Reverification.of_verdict(verdict).to_json()
    assert data == {**STORED, "votes": [STORED["votes"][0]] * 2}


@pytest.mark.django_db
def test_a_narrowing_stores_the_record_and_reads_it_back(monkeypatch, reviewer, run):
    claim = make_claim(run, "Drug A lowers blood pressure in everyone.", status=Verdict.UNCERTAIN)
    found = Reverification.from_json(STORED)
    monkeypatch.setattr(decisions, "reverify", lambda claim, text: found)
    do_narrow_claim(reviewer, claim, claim.version, "Drug A lowers blood pressure in adults.")
    decision = ReviewDecision.objects.get()
    assert decision.reverification == STORED
    assert decision.reverified == found


@pytest.mark.django_db
def test_it_reads_a_stored_decision_of_the_old_shape(reviewer, run):
    claim = make_claim(run, "Drug A lowers blood pressure in everyone.")
    ReviewDecision.objects.create(
        claim=claim,
        reviewer=reviewer,
        action="narrow",
        text_before=claim.text,
        text_after="Drug A lowers blood pressure in adults.",
        claim_version=1,
        reverification=NOT_REVERIFIED,
    )
    decision = ReviewDecision.objects.get()
    assert decision.reverified == Reverification.unavailable(NOT_REVERIFIED["reason"])
