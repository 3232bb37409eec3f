"""Acceptance: decisions carry over to unchanged claims of a re-run; only changed claims
need review, and the stored RunDiff row says which (real pipeline, real verifiers)."""

from __future__ import annotations

import pytest

from ledger.models import Claim, Relation, ReviewState
from ledger.services.ingest import ingest_documents
from ledger.services.sparse_index import sync_sparse_index
from reports.build import do_build_report
from reports.integrity import report_document
from research import runner, services
from research.models import Run, RunState
from research.pipeline.records import parse_plan
from review.diff import CarryOver, NeedsReview
from review.models import Action, ReviewDecision
from review.rundiffs import stored_record
from review.services.decisions import (
    approval_refusal,
    do_approve_claim,
    do_narrow_claim,
    do_reject_claim,
    is_override,
)
from review.services.gate import gate_policy, gate_status
from tests.factories import add_member
from tests.reports.library import ABSTRACTS, ingest_long_library, vitamin_d_plan
from tests.research.fixtures import fixture_document

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
LIBRARY = "carry-vitamin-d"


def review_with_a_narrowing(run: Run, reviewer) -> None:
    """Approve what may be approved without an override; narrow one claim that has a
    clause to drop — the first one that may not be approved as it is, else (every claim
    PASSes) the first approvable one — then approve it if its re-verification allows,
    else reject it; reject the rest."""
    policy = gate_policy(run.plan_version.plan)

    def approvable(claim: Claim) -> bool:
        return not approval_refusal(claim, reviewer, policy) and not is_override(claim)

    def head(claim: Claim) -> str:
        return claim.text.split(",")[0].rstrip(".") + "."

    def narrowable(claim: Claim) -> bool:
        return head(claim) != claim.text and len(head(claim).split()) >= 6

    claims = list(Claim.objects.filter(run=run).order_by("pk"))
    ordered = [c for c in claims if not approvable(c)] + [c for c in claims if approvable(c)]
    target = next((c for c in ordered if narrowable(c)), None)
    assert target is not None, "the library should give a claim worth narrowing"
    for claim in claims:
        if claim.pk == target.pk:
            do_narrow_claim(reviewer, claim, claim.version, head(claim), reason="narrower")
            claim.refresh_from_db()
            if approvable(claim):
                do_approve_claim(reviewer, claim, claim.version)
                continue
        elif approvable(claim):
            do_approve_claim(reviewer, claim, claim.version)
            continue
        do_reject_claim(reviewer, claim, claim.version, "unsupported", "e2e")


def start_run(author, plan) -> Run:
    run = runner.run_to_end(services.check_start_run(author, plan, 1).code)
    assert run.state == RunState.AWAITING_REVIEW
    return run


def states(run: Run) -> list[tuple[str, str, str]]:
    return sorted(Claim.objects.filter(run=run).values_list("text", "review_state", "status"))


@pytest.fixture
def first(author, reviewer) -> Run:
    library = ingest_long_library(LIBRARY)
    plan = services.do_create_plan(author, parse_plan(vitamin_d_plan()), library=library)
    add_member(plan, reviewer)
    run = start_run(author, plan)
    assert not hasattr(run, "diff") or run.diff is None  # the plan's first run
    review_with_a_narrowing(run, reviewer)
    return run


def test_it_needs_no_decision_when_plan_and_library_are_unchanged(first, author, reviewer):
    second = start_run(author, first.plan_version.plan)
    row = second.diff
    record = stored_record(row)
    decided = Claim.objects.filter(run=first).exclude(review_state=ReviewState.UNREVIEWED)
    assert row.against_id == first.pk
    assert (row.carried_over, row.needs_review) == (decided.count(), 0), record.needs_review
    assert states(second) == states(first)  # narrowed texts and verdicts included
    gate = gate_status(second)
    assert gate.open and gate.blocking == []
    carried = ReviewDecision.objects.filter(claim__run=second).select_related("carried_from")
    assert carried.count() == ReviewDecision.objects.filter(claim__run=first).count()
    for decision in carried:
        assert decision.carried_from is not None
        assert decision.carried_from.claim.run_id == first.pk
        assert (decision.action, decision.text_after, decision.reviewer_id) == (
            decision.carried_from.action,
            decision.carried_from.text_after,
            decision.carried_from.reviewer_id,
        )
    assert carried.filter(action=Action.NARROW).exists()
    # The re-run's report states what the first run's states, and its audit log says so.
    old, new = do_build_report(first, author), do_build_report(second, author)
    texts = [c.text for c in report_document(old).claims]
    assert [c.text for c in report_document(new).claims] == texts
    audit = report_document(new).appendix_c
    assert audit and all(row.carried_from for row in audit)
    assert f"(carried over from decision {audit[0].carried_from})" in new.markdown


def test_it_asks_for_review_only_where_a_changed_source_is_the_evidence(first, author, reviewer):
    title, body = ABSTRACTS[0]
    edited = body.replace("by 43 percent", "by 29 percent")
    assert edited != body
    [result] = ingest_documents(
        [fixture_document(LIBRARY, 1, title, edited)], ingest_long_library(LIBRARY)
    )
    assert result.status == "new_snapshot"
    sync_sparse_index()
    changed = f"corpus:{LIBRARY}:1"

    second = start_run(author, first.plan_version.plan)
    record = stored_record(second.diff)
    assert [c.canonical_id for c in record.sources_changed] == [changed]
    assert record.needs_review and record.carried_over
    rows: dict[str, NeedsReview | CarryOver] = {r.claim: r for r in record.needs_review}
    rows |= {r.claim: r for r in record.carried_over}
    assert set(rows) == {
        str(c) for c in Claim.objects.filter(run=second).values_list("code", flat=True)
    }
    for code, row in rows.items():
        new = Claim.objects.get(code=code)
        if not row.old_claim:
            assert code in {r.claim for r in record.needs_review}
            continue
        old = Claim.objects.get(code=row.old_claim)
        last = old.decisions.order_by("created_at", "pk").last()
        assert last is not None
        supports = (quotes(old, Relation.SUPPORTS), quotes(new, Relation.SUPPORTS))
        against = (quotes(old, Relation.CONTRADICTS), quotes(new, Relation.CONTRADICTS))
        if last.action == Action.REJECT:
            holds = supports[1] <= supports[0] and against[0] <= against[1]
            rests_on = against[0]
        else:
            holds = supports[0] <= supports[1] and against[1] <= against[0]
            rests_on = supports[0]
        # ... and none of the quotes it rests on is from the edited source.
        holds = holds and all(quote[0] != changed for quote in rests_on)
        same_verdict = old.status == new.status or last.action == Action.NARROW
        carried = row in record.carried_over
        assert carried == (holds and same_verdict), (new.text, row)
        assert (new.review_state == ReviewState.UNREVIEWED) != carried
    # The edited source is the evidence of approved claims: each of them is flagged.
    moved = [r for r in record.needs_review if f"{changed} (source changed)" in " ".join(r.reasons)]
    assert moved, record.needs_review
    for row in record.needs_review:
        print("needs review:", row.text[:70], row.reasons)


def quotes(claim: Claim, relation: str) -> set[tuple[str, str, int, int, str]]:
    links = claim.evidence.filter(relation=relation).select_related("snapshot__source")
    return {
        (
            link.snapshot.source.canonical_id,
            link.passage_fingerprint,
            link.quote_start,
            link.quote_end,
            link.snapshot.text_sha256,
        )
        for link in links
    }
