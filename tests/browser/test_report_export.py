"""Browser: plan → run → review → report → download every format (real Chromium)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse
from pypdf import PdfReader

from ledger.models import Verdict
from review.exports.bundle import verify_bundle
from tests.browser.support import chromium_page, login
from tests.factories import make_plan, make_run
from tests.reports.conftest import APPROVED, FAILED, UNREVIEWED, claim_from_source

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def browser_page(reviewed_scene):
    """Started after the scene: Playwright's sync API runs an event loop in this thread,
    and Django refuses ORM calls from a thread with a running loop."""
    with chromium_page(allow_orm_beside_playwright=False) as page:
        yield page


@pytest.fixture
def reviewed_scene(author, reviewer):
    plan = make_plan(
        author, question="Which everyday habits protect the heart?", members=(reviewer,)
    )
    run = make_run(plan)
    sub = run.plan_version.subquestions.first()
    approve = [
        claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub),
        claim_from_source(run, APPROVED[1], title="Exercise cohort", sub=sub),
    ]
    reject = claim_from_source(run, FAILED, title="Coffee news", sub=sub, status=Verdict.FAIL)
    claim_from_source(run, UNREVIEWED, title="Tea study", sub=sub)
    return plan, run, approve, reject


def download(page, fmt):
    with page.expect_download() as info:
        page.click(f"#report-exports a[href$='/export/{fmt}']")
    return info.value


def test_it_goes_from_plan_to_downloaded_report(
    live_server, browser_page, reviewed_scene, tmp_path
):
    page, base = browser_page, live_server.url
    plan, run, approve, reject = reviewed_scene
    login(page, base, "reviewer")

    page.goto(base + plan.get_absolute_url())
    page.click(f"a[href='{run.get_absolute_url()}']")
    page.wait_for_url(f"**{run.get_absolute_url()}")

    for claim in approve:
        page.goto(base + claim.get_absolute_url())
        page.click("#approve-form button[type=submit]")
        page.wait_for_load_state()
    page.goto(base + reject.get_absolute_url())
    page.click("#reject summary")
    page.select_option("#reject-form select[name=reason_code]", "contradicted")
    page.click("#reject-form button[type=submit]")
    page.wait_for_load_state()

    page.goto(base + reverse("review-list-reports", args=[run.code]))
    assert "Open." in page.inner_text("#report-gate")
    page.click("text=Build report")
    page.wait_for_url("**/reports/*/")
    assert page.inner_text("h1") == plan.question
    body = page.inner_text("#report")
    assert APPROVED[0].rstrip(".") in body
    assert FAILED not in body and UNREVIEWED not in body

    files = {fmt: download(page, fmt) for fmt in ("md", "html", "pdf", "zip", "bib", "csl")}
    paths = {}
    for fmt, item in files.items():
        paths[fmt] = tmp_path / item.suggested_filename
        item.save_as(paths[fmt])

    pdf = paths["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF-")
    text = " ".join(
        " ".join((p.extract_text() or "").split()) for p in PdfReader(io.BytesIO(pdf)).pages
    )
    for heading in (
        plan.question,
        "Claim register",
        "References",
        "Appendix A",
        "Appendix C",
        "Appendix E",
    ):
        assert heading in text, heading
    assert verify_bundle(paths["zip"]) == []
    with zipfile.ZipFile(paths["zip"]) as archive:
        claims = json.loads(archive.read("claims.json"))
    assert [c["text"] for c in claims["approved"]] == APPROVED
    assert APPROVED[1].rstrip(".") in paths["md"].read_text()
    assert "<!doctype html>" in paths["html"].read_text()
    assert "@" in paths["bib"].read_text()
    assert json.loads(paths["csl"].read_text())[0]["id"] == "src1"
    for fmt in ("md", "html", "bib", "csl"):
        content = paths[fmt].read_text()
        assert FAILED not in content and UNREVIEWED not in content, fmt
