"""Browser: a reviewer works through the review queue with the keyboard (real Chromium)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger.models import Verdict
from review.models import ReviewDecision
from tests.browser.support import login
from tests.factories import make_claim, make_passage, make_plan, make_run, make_snapshot

HOSTILE = (
    "Methods. <script>window.__pwned = 1</script> In the trial, coffee improved "
    'reaction time in adults. <img src=x onerror="window.__pwned = 2"> Results follow.'
)
NARROWED = "Drug A lowered blood pressure in adults with hypertension."

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def queue(author, reviewer):
    """Four flagged claims in review order, plus an unflagged PASS claim outside the queue."""
    plan = make_plan(author, question="Does Drug A help?", members=(reviewer,))
    run = make_run(plan)
    sub = run.plan_version.subquestions.first()
    trial = make_passage(
        make_snapshot(
            "Background. In a randomised trial, Drug A lowered blood pressure in adults with "
            "hypertension. Children were not studied.",
            title="Drug A trial",
        )
    )
    hostile = make_passage(make_snapshot(HOSTILE, title="Coffee <b>study</b>"))
    claims = [
        make_claim(
            run,
            "Drug A lowers blood pressure in adults and children.",
            status=Verdict.UNCERTAIN,
            flags=["overstatement"],
            passage=trial,
            quote="Drug A lowered blood pressure in adults with hypertension.",
            subquestion=sub,
        ),
        make_claim(run, "Drug A is safe in pregnancy.", flags=["single-source"], subquestion=sub),
        make_claim(
            run,
            "Coffee improves reaction time in adults.",
            status=Verdict.UNCERTAIN,
            passage=hostile,
            quote="coffee improved reaction time in adults",
            subquestion=sub,
        ),
        make_claim(run, "Drug A is taken once daily.", flags=["high-impact"], subquestion=sub),
    ]
    make_claim(run, "Drug A was approved in 2001.", subquestion=sub)
    return run, claims


def press(page, key, url_part=None):
    """Press a shortcut; when it navigates, wait for the next page to load."""
    if url_part is None:
        page.keyboard.press(key)
        return
    with page.expect_navigation():
        page.keyboard.press(key)
    assert url_part in page.url


def test_it_works_through_the_queue_with_the_keyboard(live_server, browser_page, queue):
    page, base = browser_page, live_server.url
    run, claims = queue
    narrow, reject, hostile, last = claims
    login(page, base, "reviewer")

    # The ledger: gate closed, "q" opens the queue at the first blocking claim.
    page.goto(base + reverse("review-show-ledger", args=[run.code]))
    assert page.inner_text("#gate .gate-state") == "closed"
    press(page, "q", str(narrow.code))
    assert "1 of 4 claims to review" in page.inner_text("#queue-position")

    # j / k move through the queue; e opens the evidence at the quote, b comes back.
    press(page, "j", str(reject.code))
    press(page, "k", str(narrow.code))
    press(page, "e", "/snapshots/")
    assert page.inner_text("mark#quote") == NARROWED
    press(page, "b", str(narrow.code))

    # n narrows: the field gets focus, Ctrl+Enter submits, the re-verification shows.
    press(page, "n")
    assert page.evaluate("document.activeElement.name") == "text"
    page.keyboard.press("Control+a")
    page.keyboard.type(NARROWED)
    page.keyboard.press("Tab")
    page.keyboard.type("adults with hypertension in a randomised trial")
    press(page, "Control+Enter", str(narrow.code))
    result = page.inner_text("#reverification")
    assert "Re-verification of the narrowed text" in result
    assert "PASS" in result
    assert page.inner_text("#claim-text") == NARROWED
    press(page, "a", str(reject.code))  # approved after re-verification; on to the next

    # r rejects with a reason from the list and free text.
    press(page, "r")
    assert page.evaluate("document.activeElement.name") == "reason_code"
    page.select_option("#reject-form select[name=reason_code]", "unsupported")
    page.focus("#reject-form textarea[name=reason]")
    page.keyboard.type("One press release, no trial.")
    press(page, "Control+Enter", str(hostile.code))

    # Hostile evidence text is shown as text: no script ran, nothing was injected.
    assert "<script>window.__pwned = 1</script>" in page.inner_text("#pool-support")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#pool-support img").count() == 0
    assert page.inner_text("#pool-support mark") == "coffee improved reaction time in adults"

    # Approving an UNCERTAIN claim is an override: "a" asks for the reason first.
    press(page, "a")
    assert page.evaluate("document.activeElement.name") == "note"
    assert "Approve as override" in page.inner_text("#approve-form button")
    page.keyboard.type("The trial quote states it; the hostile markup is the page's, not ours.")
    press(page, "Control+Enter", str(last.code))
    press(page, "a", reverse("review-show-ledger", args=[run.code]))
    assert page.inner_text("#gate .gate-state") == "open"
    assert "synthesis may start" in page.inner_text("#gate")

    # The audit trail lists every decision with its actor and time.
    page.goto(base + reverse("review-show-audit", args=[run.code]))
    rows = page.locator("#audit tbody tr")
    assert rows.count() == 5
    assert [a.strip() for a in page.locator("#audit td.action").all_inner_texts()] == [
        "Narrow",
        "Approve",
        "Reject",
        "Approve override of UNCERTAIN",
        "Approve",
    ]
    assert set(page.locator("#audit td.actor").all_inner_texts()) == {"reviewer"}
    decisions = list(ReviewDecision.objects.order_by("created_at", "pk"))
    times = page.locator("#audit time").evaluate_all("els => els.map(e => e.dateTime)")
    assert times == [d.created_at.isoformat() for d in decisions]
