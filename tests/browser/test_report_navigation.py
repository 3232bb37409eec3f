"""Browser: from the plan page, by links alone, a reader reaches the report, downloads its
exports and opens the run diff; the report page fits a 1,280 px window and no page
request fails (the favicon included). Real daphne, real Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from pypdf import PdfReader

from reports.build import check_request_report
from research import runner
from research.models import RunState
from research.stages.rundiff import diff_and_carry_over
from review.services.decisions import do_approve_claim, do_reject_claim
from tests.browser.support import chromium_page, login
from tests.factories import make_run
from tests.reports.conftest import APPROVED, FAILED, UNREVIEWED, claim_from_source
from tests.research.processes import finish, start_daphne

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1280, "height": 900}


@pytest.fixture
def reported_run(author, reviewer):
    """A plan with an earlier run and a reviewed, reported later run diffed against it."""
    from tests.factories import make_plan

    plan = make_plan(
        author, question="Which everyday habits protect the heart?", members=(reviewer,)
    )
    make_run(plan)
    run = make_run(plan)
    sub = run.plan_version.subquestions.first()
    for text, title in zip(APPROVED, ("Aspirin trial", "Exercise cohort"), strict=True):
        claim = claim_from_source(run, text, title=title, sub=sub)
        do_approve_claim(reviewer, claim, claim.version)
    failed = claim_from_source(run, FAILED, title="Coffee news", sub=sub, status="fail")
    do_reject_claim(reviewer, failed, failed.version, "contradicted")
    claim_from_source(run, UNREVIEWED, title="Tea study", sub=sub)
    assert diff_and_carry_over(run) is not None
    check_request_report(reviewer, run, enqueue=False)
    run = runner.run_to_end(run.code)  # the synthesizing stage, as a worker runs it
    assert run.state == RunState.DONE
    return plan, run


@pytest.fixture
def server(transactional_db):
    daphne, log, base = start_daphne()
    yield base
    print("daphne:", finish(daphne, log))


def failed_requests(page) -> list[str]:
    failures: list[str] = []
    page.on(
        "response",
        lambda r: failures.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    return failures


def test_it_reaches_report_exports_and_run_diff_from_the_plan_page_by_links(
    reported_run, server, tmp_path
):
    plan, run = reported_run
    with chromium_page() as opened:
        page: Any = opened
        page.set_viewport_size(VIEWPORT)
        failures = failed_requests(page)
        login(page, server, "reviewer")
        page.goto(server + plan.get_absolute_url())

        # Plan page -> run page -> the latest report.
        page.click(f"a[href='{run.get_absolute_url()}']")
        page.wait_for_url(f"**{run.get_absolute_url()}")
        assert "Done" in page.inner_text("#run-status")
        page.click("#run-status #run-report")
        page.wait_for_url("**/reports/*/")
        assert page.inner_text("h1") == plan.question
        body = page.inner_text("#report")
        assert APPROVED[0].rstrip(".") in body and FAILED not in body and UNREVIEWED not in body
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"the report page scrolls sideways: {width}"

        # Its exports, by their links.
        for fmt in ("md", "html", "pdf", "zip", "bib", "csl"):
            with page.expect_download() as info:
                page.click(f"#report-exports a[href$='/export/{fmt}']")
            path = tmp_path / info.value.suggested_filename
            info.value.save_as(path)
            assert path.stat().st_size > 0, fmt
            if fmt == "pdf":
                assert len(PdfReader(path).pages) >= 1

        # The run diff, from the report page's run links.
        page.click(".review-links a.run-diff")
        page.wait_for_url(f"**/runs/{run.code}/diff/")
        assert "Changes" in page.inner_text("h1")

        # And straight from the plan page's runs table.
        page.goto(server + plan.get_absolute_url())
        links = f"tr:has(a[href='{run.get_absolute_url()}']) td.run-links"
        page.locator(f"{links} a.run-latest-report").click()
        page.wait_for_url("**/reports/*/")
        page.go_back()
        page.locator(f"{links} a.run-diff").click()
        page.wait_for_url(f"**/runs/{run.code}/diff/")
    assert failures == []
