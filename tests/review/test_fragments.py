"""The ledger and capsule pages keep their reader-independent parts rendered
(review/fragments.py): a write of any row they show, through the services or straight
to the database, must show on the very next request; nothing of one reader leaks to
another."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.core.cache import caches
from django.db import connection
from django.urls import reverse

from ledger.models import Claim, EvidenceLink, ReviewState, Snapshot, Source, VerifierVote
from research.models import Run, Subquestion
from review import fragments
from review.services.decisions import do_approve_claim, do_reject_claim
from review.services.gate import gate_status
from tests.factories import make_claim


@contextmanager
def statements() -> Iterator[list[str]]:
    """Every SQL statement the code inside runs (request_started clears Django's log)."""
    seen: list[str] = []

    def record(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield seen


def _ledger(client, run: Run, **params: str) -> str:
    response = client.get(reverse("review-show-ledger", args=[run.code]), params)
    assert response.status_code == 200
    return str(response.content.decode())


def _capsule(client, claim: Claim) -> str:
    response = client.get(claim.get_absolute_url())
    assert response.status_code == 200
    return str(response.content.decode())


@pytest.mark.django_db
def test_it_serves_the_ledger_table_from_the_cache_until_a_claim_changes(
    client, reviewer, run, flagged, clean
):
    client.force_login(reviewer)
    first = _ledger(client, run)
    with statements() as seen:
        again = _ledger(client, run)
    assert again.split('id="ledger-table"')[1] == first.split('id="ledger-table"')[1]
    assert not any('FROM "ledger_claim"' in sql and "LIMIT" in sql for sql in seen), seen
    Claim.objects.filter(pk=clean[0].pk).update(status="fail")  # no service, no signal
    with statements() as seen:
        changed = _ledger(client, run, status="fail")
    assert clean[0].text in changed
    assert any('FROM "ledger_claim"' in sql and "LIMIT" in sql for sql in seen)


@pytest.mark.django_db
def test_it_never_shows_a_stale_verdict_review_state_or_flag_on_the_ledger(
    client, reviewer, run, flagged, clean
):
    client.force_login(reviewer)
    claim = clean[0]
    html = _ledger(client, run)
    assert "status-pass" in html
    blocking = gate_status(run).required

    Claim.objects.filter(pk=claim.pk).update(status="uncertain")
    html = _ledger(client, run)
    row = html.split(claim.text)[1].split("</tr>")[0]
    assert "status-uncertain" in row
    assert f"0 of {blocking + 1} claims to review decided" in html  # the gate follows

    Claim.objects.filter(pk=claim.pk).update(review_state=ReviewState.REJECTED)
    row = _ledger(client, run).split(claim.text)[1].split("</tr>")[0]
    assert "review-rejected" in row

    Claim.objects.filter(pk=claim.pk).update(flags=["overstatement", "fresh-flag"])
    row = _ledger(client, run).split(claim.text)[1].split("</tr>")[0]
    assert "fresh-flag" in row

    Claim.objects.filter(pk=claim.pk).update(text="A reworded claim.")
    assert "A reworded claim." in _ledger(client, run)

    Claim.objects.filter(pk=claim.pk).update(disposition="superseded")
    html = _ledger(client, run)
    assert "A reworded claim." not in html and "4</strong> claims" in html


@pytest.mark.django_db
def test_it_follows_decisions_subquestions_and_the_run_state(client, reviewer, run, flagged, clean):
    client.force_login(reviewer)
    before = _ledger(client, run)
    assert "gate-closed" in before
    do_approve_claim(reviewer, flagged[0], 1, note="read the source: it states this")
    after = _ledger(client, run)
    assert "1 of 3 claims to review decided" in after
    row = after.split(flagged[0].text)[1].split("</tr>")[0]
    assert "review-approved" in row

    subquestion = Subquestion.objects.create(
        plan_version=run.plan_version, key="sq9", text="How safe is it?", position=9
    )
    Claim.objects.filter(pk=clean[1].pk).update(subquestion=subquestion)
    assert "How safe is it?" in _ledger(client, run)
    Subquestion.objects.filter(pk=subquestion.pk).update(text="Is it safe for children?")
    assert "Is it safe for children?" in _ledger(client, run)

    Run.objects.filter(pk=run.pk).update(state="verifying")
    assert "The run has not finished verification yet." in _ledger(client, run)


@pytest.mark.django_db
def test_it_never_shows_a_stale_capsule(client, reviewer, run, flagged):
    client.force_login(reviewer)
    claim = flagged[0]
    link = claim.evidence.get()
    html = _capsule(client, claim)
    assert "No verifier voted on this claim." in html

    VerifierVote.objects.create(
        claim=claim, evidence=link, verifier="nli-new", family="nli", verdict="supports"
    )
    assert "nli-new" in _capsule(client, claim)

    Claim.objects.filter(pk=claim.pk).update(status="fail", rationale="Refuted by a trial.")
    html = _capsule(client, claim)
    assert '<strong class="status-fail">FAIL</strong>' in html
    assert "Refuted by a trial." in html

    EvidenceLink.objects.filter(pk=link.pk).update(relation="contradicts")
    refute = _capsule(client, claim).split('id="pool-refute"')[1].split("</div>")[0]
    assert f'id="evidence-{link.pk}"' in refute

    Source.objects.filter(snapshots=link.snapshot).update(title="A retitled source")
    assert "A retitled source" in _capsule(client, claim)

    tampered = link.snapshot.text.replace(link.quote, "X" * len(link.quote))
    Snapshot.objects.filter(pk=link.snapshot_id).update(text=tampered)
    assert "no longer matches the stored quote" in _capsule(client, claim)


@pytest.mark.django_db
def test_it_shows_a_decision_on_the_capsule_at_once(client, reviewer, run, flagged):
    client.force_login(reviewer)
    claim = flagged[1]
    assert "No decision yet." in _capsule(client, claim)
    do_reject_claim(reviewer, claim, 1, "unsupported", "The quote says otherwise.")
    html = _capsule(client, claim)
    assert 'id="review-state">Rejected' in html
    assert "The quote says otherwise." in html and "No decision yet." not in html


@pytest.mark.django_db
def test_it_keeps_each_readers_own_parts_out_of_the_cache(
    client, reviewer, researcher, run, flagged
):
    claim = flagged[0]
    client.force_login(reviewer)
    as_reviewer = _capsule(client, claim)
    assert 'id="approve-form"' in as_reviewer
    token = as_reviewer.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    client.logout()
    client.force_login(researcher)
    as_researcher = _capsule(client, claim)
    assert 'id="read-only"' in as_researcher
    assert (
        'id="approve-form"' not in as_researcher
        and "csrfmiddlewaretoken"
        not in (as_researcher.split('id="decide"')[1].split("</section>")[0])
    )
    assert token not in as_researcher
    assert 'class="who">researcher2<' in as_researcher


@pytest.mark.django_db
def test_it_keeps_no_page_of_another_run(client, reviewer, plan, run, flagged):
    other = Run.objects.create(plan_version=run.plan_version, state="awaiting_review")
    make_claim(other, "Only in the other run.")
    client.force_login(reviewer)
    assert "Only in the other run." not in _ledger(client, run)
    assert "Only in the other run." in _ledger(client, other)
    assert "Only in the other run." not in _ledger(client, run)


@pytest.mark.django_db(transaction=True)
def test_it_reads_a_fingerprint_and_its_rows_in_one_snapshot():
    """Outside a transaction the page's reads share one REPEATABLE READ snapshot."""
    with fragments.one_snapshot(), connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        assert cursor.fetchone()[0] == "repeatable read"
    assert not connection.in_atomic_block


def test_it_keys_parts_by_everything_that_selects_them():
    assert fragments.key("run:1:a", "ledger-table", "", None) != fragments.key(
        "run:1:b", "ledger-table", "", None
    )
    assert fragments.key("run:1:a", "ledger-table", "", "2") != fragments.key(
        "run:1:a", "ledger-table", "", None
    )
    assert caches[fragments.CACHE_ALIAS] is not None
