"""Counter-evidence quotes are a source's own words: shown as stored, never redacted because
a rejected or unreviewed claim was mined from the same sentence (issue 26.5). Free text that
restates such a claim (a reviewer's note) is still redacted."""

from __future__ import annotations

import re

import pytest

from ledger.models import EvidenceLink, Pool, Relation, Verdict, VerifierVote
from reports.build import do_build_report
from reports.export import do_export_report
from reports.exports.withheld import REDACTED
from reports.integrity import report_document
from review.services.decisions import do_approve_claim, do_reject_claim
from tests.reports.conftest import APPROVED, claim_from_source

# The contradicting sentence of a source, and a claim mined from it word for word.
CONTRARY = "In a second trial of 900 adults, aspirin did not reduce the risk of a heart attack."


def words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def contradict(claim, other, *, quote=CONTRARY):
    """A contradicting link on ``claim`` quoting ``other``'s source sentence."""
    anchor = other.evidence.get()
    start = anchor.snapshot.text.index(CONTRARY)
    return EvidenceLink.objects.create(
        claim=claim,
        passage=anchor.passage,
        snapshot=anchor.snapshot,
        pool=Pool.REFUTE,
        relation=Relation.CONTRADICTS,
        quote=quote,
        quote_start=start,
        quote_end=start + len(CONTRARY),
        passage_fingerprint=anchor.passage_fingerprint,
        score=0.8,
    )


def scene(run, sub, reviewer, *, state):
    approved = claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub)
    # An unreviewed FAIL would close the gate; an unreviewed PASS leaves it open.
    status = Verdict.FAIL if state == "rejected" else Verdict.PASS
    mined = claim_from_source(run, CONTRARY, title="Second trial", sub=sub, status=status)
    contradict(approved, mined)
    do_approve_claim(reviewer, approved, approved.version, f"Not: {CONTRARY}")
    if state == "rejected":
        do_reject_claim(reviewer, mined, mined.version, "other", "out of scope")
    return approved, mined


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["rejected", "unreviewed"])
def test_it_shows_a_contradicting_quote_whose_sentence_a_withheld_claim_restates(
    run, sub, reviewer, author, state
):
    scene(run, sub, reviewer, state=state)
    report = do_build_report(run, author)
    document = report_document(report)

    [row] = document.counter.contradictions
    assert row.quote == CONTRARY
    markdown = do_export_report(report, "md", author).data.decode()
    html = do_export_report(report, "html", author).data.decode()
    counter = markdown.split("Counter-evidence", 1)[1]
    assert words(CONTRARY) in words(counter)
    assert words(CONTRARY) in words(html)
    # The reviewer's note restating the withheld claim is the report's own text: redacted.
    [note] = [row.reason for row in document.appendix_c if row.claim == "C1"]
    assert note == f"Not: {REDACTED}."


@pytest.mark.django_db
def test_it_redacts_a_contradicting_quote_that_is_not_its_snapshot_s_text(
    run, sub, reviewer, author
):
    approved = claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub)
    mined = claim_from_source(run, CONTRARY, title="Second trial", sub=sub, status=Verdict.FAIL)
    forged = f"{CONTRARY} It also doubled strokes."
    contradict(approved, mined, quote=forged)  # stored quote differs from the snapshot span
    do_approve_claim(reviewer, approved, approved.version)
    do_reject_claim(reviewer, mined, mined.version, "other", "out of scope")
    document = report_document(do_build_report(run, author))

    [row] = document.counter.contradictions
    assert REDACTED in row.quote and words(CONTRARY) not in words(row.quote)


@pytest.mark.django_db
def test_it_judges_a_contradiction_by_its_votes_not_by_its_retrieval_score(
    run, sub, reviewer, author
):
    """Re-running the GIL question, a credible contradiction was printed "credible
    contradiction (0.03)": 0.03 was the passage's retrieval score, while the families that
    found it contradicting voted 0.75 (rules) and 0.53 (learned). The column says who judged
    it and how strongly; a retrieval score is no judgement."""
    approved, mined = scene(run, sub, reviewer, state="rejected")
    link = approved.evidence.get(relation=Relation.CONTRADICTS)
    link.score = 0.03
    link.save(update_fields=["score"])
    for family, verdict, score, valid in (
        ("rules", Relation.CONTRADICTS, 0.75, True),
        ("learned", Relation.CONTRADICTS, 0.53, True),
        ("align", Relation.SUPPORTS, 0.66, True),  # not a contradiction: not listed
        ("nli", Relation.CONTRADICTS, 0.99, False),  # discarded: not counted
    ):
        VerifierVote.objects.create(
            claim=approved, evidence=link, verifier=family, family=family,
            verdict=verdict, score=score, valid=valid,
        )  # fmt: skip
    document = report_document(do_build_report(run, author))

    [row] = document.counter.contradictions
    assert row.strength == "credible contradiction (rules 0.75, learned 0.53)"
