"""Browser: review → "Build report" → a worker builds it while the run page shows progress →
the run is Done → download every format (real Chromium, daphne and a procrastinate worker).

That the stage went through its intermediate steps is read from the progress it persisted
(every change of its checkpoint's ``done``/``total``, logged by a trigger the test adds),
not from the states the page happened to show: the worker publishes at most every
``PUBLISH_EVERY_S`` and the page is sampled, so a fast build can show 0/9 and then Done.
"""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest
from django.db import connection
from django.urls import reverse
from pypdf import PdfReader

from ledger.models import Verdict
from research.models import Run, RunState
from research.stages.synthesize import STEPS
from tests.browser.support import chromium_page, login
from tests.factories import make_plan, make_run
from tests.reports.bundles import bundle_problems
from tests.reports.conftest import APPROVED, FAILED, UNREVIEWED, claim_from_source
from tests.research.processes import finish, start_daphne, start_worker, wait_for_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


# Every committed change of a checkpoint's progress, in the order it was written; the
# worker (another process) writes the rows, so the record is kept by the database itself.
RECORD_PROGRESS = """
CREATE TABLE test_progress_event (
    id bigserial PRIMARY KEY, run_id bigint NOT NULL, stage text NOT NULL,
    round integer NOT NULL, done integer NOT NULL, total integer NOT NULL
);
CREATE FUNCTION test_record_progress() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.done = NEW.done AND OLD.total = NEW.total THEN
        RETURN NULL;
    END IF;
    INSERT INTO test_progress_event (run_id, stage, round, done, total)
    VALUES (NEW.run_id, NEW.stage, NEW.round, NEW.done, NEW.total);
    RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER test_record_progress AFTER INSERT OR UPDATE OF done, total
    ON research_stagecheckpoint FOR EACH ROW EXECUTE FUNCTION test_record_progress();
"""
FORGET_PROGRESS = """
DROP TRIGGER IF EXISTS test_record_progress ON research_stagecheckpoint;
DROP FUNCTION IF EXISTS test_record_progress();
DROP TABLE IF EXISTS test_progress_event;
"""


@pytest.fixture
def recorded_progress(transactional_db):
    """The (done, total) a run's stage persisted, each change in order, from a trigger."""

    def events(run: Run, stage: str) -> list[tuple[int, int]]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT done, total FROM test_progress_event"
                " WHERE run_id = %s AND stage = %s ORDER BY id",
                [run.pk, stage],
            )
            return [(done, total) for done, total in cursor.fetchall()]

    with connection.cursor() as cursor:
        cursor.execute(FORGET_PROGRESS)  # left behind by an aborted run on a reused database
        cursor.execute(RECORD_PROGRESS)
    try:
        yield events
    finally:
        with connection.cursor() as cursor:
            cursor.execute(FORGET_PROGRESS)


@pytest.fixture
def browser_page(reviewed_scene):
    """Started after the scene; the test reads the run beside Playwright's event loop."""
    with chromium_page() as page:
        yield page


@pytest.fixture
def servers(transactional_db):
    """daphne (HTTP + websockets) and one worker, on the test database."""
    daphne, daphne_log, base = start_daphne()
    worker, worker_log = start_worker("report-worker")
    yield base, daphne, worker
    print("worker:", finish(worker, worker_log))
    print("daphne:", finish(daphne, daphne_log))


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


def watch_states(page, timeout_s: float) -> list[str]:  # what a user sees, sampled
    """The run states (and stage progress) the page shows, in order, until Done."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = page.get_attribute("#run-status", "data-state")
        bar = page.locator("#stages tr[data-stage=synthesizing] progress")
        progress = f"{bar.get_attribute('value')}/{bar.get_attribute('max')}" if bar.count() else ""
        seen.append(f"{state} {progress}".strip())
        if state in {"done", "awaiting_review", "failed"} and len(seen) > 1:
            return list(dict.fromkeys(seen))
        time.sleep(0.05)
    raise AssertionError(f"the page did not reach Done: {list(dict.fromkeys(seen))}")


def test_it_builds_the_report_in_a_worker_and_downloads_every_format(
    recorded_progress, servers, browser_page, reviewed_scene, tmp_path
):
    base, daphne, worker = servers
    page = browser_page
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
    page.wait_for_url(f"**{run.get_absolute_url()}")  # the request only queues the stage
    page.evaluate("window.sameDocument = true")
    seen = watch_states(page, timeout_s=240)
    print("SEEN", seen)
    assert seen[-1].startswith("done"), seen
    # Live, over the websocket: the page reached Done without being reloaded.
    assert page.evaluate("window.sameDocument") is True
    assert "Done" in page.inner_text("#run-status")
    wait_for_run(run, {RunState.DONE}, 30, daphne, worker)
    # The worker built it step by step: load, synthesize, save, then each format, in order
    # (the 0/0 before is the checkpoint "Build report" reset), as the stage recorded it.
    steps = [step for step in recorded_progress(run, RunState.SYNTHESIZING) if step[1]]
    assert steps == [(n, STEPS) for n in range(STEPS + 1)], (steps, seen)
    page.reload()  # the finished page renders from the database alone
    row = page.locator("#stages tr[data-stage=synthesizing]")
    assert "Done" in row.inner_text() and "version 1" in row.inner_text()
    page.click("#run-report")
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
    assert bundle_problems(paths["zip"]) == []
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
