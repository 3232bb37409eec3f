"""Browser: audit an engine's report — paste it, run, read the ledger, review, export.

The report cites five sources for five claims (one citation is fabricated: its page does
not exist; one claim says the opposite of its source) and makes one uncited claim. A
local server plays the cited pages; the worker's fetcher allows 127.0.0.1 on purpose.
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from django.urls import reverse

from ledger.models import CitedClaim
from research.models import Run
from tests.browser.support import chromium_page, login
from tests.research.processes import finish, start_daphne, start_worker, wait_for_run
from tests.research.test_audit_run import PAGES, Handler

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

PAGES_HERE = {
    **PAGES,
    "/tiers": (
        "Free-threading support tiers",
        "<p>The free-threaded build is supported in tier 2 from CPython 3.14 on.</p>",
    ),
}

REPORT = """# Free-threaded CPython: where it stands

CPython 3.13 adds an experimental build that runs without the global interpreter lock [1].
Single-threaded code runs about 40% faster on the free-threaded build [2].
Extension modules must declare that they support running without the GIL [3].
The free-threaded build is supported in tier 2 from CPython 3.14 on [4].
The free-threaded build was accepted by the steering council in 2019 [5].
Most popular packages already ship free-threaded wheels.

### Sources
[1] What's new in Python 3.13: {base}/whatsnew
[2] Free-threading performance: {base}/perf
[3] C API: {base}/capi
[4] Support tiers: {base}/tiers
[5] Steering council decision: {base}/decision
"""


class PagesHandler(Handler):
    pages = PAGES_HERE


@pytest.fixture
def browser_page():
    with chromium_page(fail_on_dialog=False) as page:
        yield page


@pytest.fixture
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), PagesHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def servers(transactional_db):
    daphne, daphne_log, base = start_daphne()
    worker, worker_log = start_worker(
        "audit-worker", FETCH_ALLOWED_HOSTS="127.0.0.1", SEARXNG_URL=""
    )
    yield base, daphne, worker
    print("worker:", finish(worker, worker_log))
    print("daphne:", finish(daphne, daphne_log))


def test_it_audits_a_pasted_report_from_paste_to_export(
    browser_page, servers, site, author, reviewer, tmp_path: Path
):
    base, daphne, worker = servers
    page = browser_page
    login(page, base, "author")

    # Paste the report.
    page.goto(base + reverse("research-list-plans"))
    page.click("#audit-report")
    page.fill("#import-report textarea[name=text]", REPORT.format(base=site))
    page.click("#import-report button[type=submit]")
    page.wait_for_selector("#plan-editor")
    assert "Audit: Free-threaded CPython: where it stands" in page.inner_text("h1")

    # Run it.
    page.click("#start-run button[type=submit]")
    page.wait_for_url(lambda url: "/runs/" in url)
    run = wait_for_run(Run.objects.get(), {"awaiting_review", "failed"}, 420, daphne, worker)
    assert run.state == "awaiting_review", run.error

    # The ledger shows each claim with its cited source, the citation check and the verdict.
    page.goto(base + reverse("review-show-ledger", args=[run.code]))
    rows = page.locator("#ledger-table tbody tr")
    assert rows.count() == 6
    table = page.inner_text("#ledger-table")
    for title in ("What's new in Python 3.13", "Free-threading performance", "C API"):
        assert title in table
    assert "Steering council decision" in table and "unverifiable" in table
    cited = {c.sentences[0]: c for c in CitedClaim.objects.filter(claim__run=run)}
    fabricated, contradicted, uncited = cited[4], cited[1], cited[5]
    assert fabricated.outcome == "unverifiable" and "404" in fabricated.reason

    # The claim page says what the report cites and why it could not be read.
    page.goto(base + fabricated.claim.get_absolute_url())
    section = page.inner_text("#report-citation")
    assert "[5] Steering council decision" in section and "could not be fetched" in section

    # Review: reject the uncited claim with a reason (as a reviewer of the plan).
    run.plan_version.plan.memberships.create(user=reviewer, role="reviewer")
    page.context.clear_cookies()
    login(page, base, "reviewer")
    page.goto(base + uncited.claim.get_absolute_url())
    page.click("#reject summary")
    page.select_option("#reject-form select[name=reason_code]", "unsupported")
    page.fill("#reject-form textarea[name=reason]", "No source given for this.")
    page.click("#reject-form button[type=submit]")
    page.wait_for_selector("text=Rejected")

    # The claim its source contradicts: the verifier families may abstain on it, so the
    # reviewer reads the cited source's words beside the claim and rejects it as
    # contradicted; the audited report then marks it contradicted, saying who judged.
    page.goto(base + contradicted.claim.get_absolute_url())
    section = page.inner_text("#report-citation")
    assert "[2] Free-threading performance" in section
    assert "10% slower" in section  # the cited source's words, whatever the check said
    page.click("#reject summary")
    page.select_option("#reject-form select[name=reason_code]", "contradicted")
    page.fill("#reject-form textarea[name=reason]", "The cited page says 10% slower.")
    page.click("#reject-form button[type=submit]")
    page.wait_for_selector("text=Rejected")
    page.goto(base + contradicted.claim.get_absolute_url())  # the page went on to the next
    assert page.inner_text("#report-citation .audit-mark") == "contradicted"

    # Export the audited report from the ledger.
    page.goto(base + reverse("review-show-ledger", args=[run.code]))
    with page.expect_download() as download:
        page.click("#audited-report a:text('Markdown')")
    path = tmp_path / "audited.md"
    download.value.save_as(path)
    text = path.read_text()

    assert "CPython 3.13 adds an experimental build" in text  # the original text, kept
    line = next(li for li in text.splitlines() if "steering council in 2019" in li)
    assert "**[unverifiable: C" in line  # the fabricated citation
    line = next(li for li in text.splitlines() if "40% faster" in li)
    assert "**[contradicted: C" in line  # found by the families, or judged by the reviewer
    assert contradicted.outcome in ("contradicts", "insufficient")  # never confirmed
    ledger_row = next(li for li in text.splitlines() if li.startswith("| C") and "40%" in li)
    assert "Rejected by a reviewer: Credible evidence contradicts it" in ledger_row
    line = next(li for li in text.splitlines() if "free-threaded wheels" in li)
    assert "**[dropped: C" in line
    assert "## Appendix A. Disposition ledger" in text
