"""Browser: create a plan, edit it inline, start a run and watch it progress live (Chromium)."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from research.models import Plan, Run
from tests.browser.support import chromium_page, login
from tests.research.fixtures import ingest_fixture_library
from tests.research.processes import finish, start_daphne, start_worker, wait_for_run

QUESTION = "Does vitamin D supplementation reduce the risk of fractures in older adults?"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def browser_page():
    with chromium_page(fail_on_dialog=False) as page:
        yield page


@pytest.fixture
def servers(transactional_db):
    """daphne (HTTP + websockets) and one worker, on the test database."""
    daphne, daphne_log, base = start_daphne()
    worker, worker_log = start_worker("browser-worker")
    yield base, daphne, worker
    print("worker:", finish(worker, worker_log))
    print("daphne:", finish(daphne, daphne_log))


def create_plan(page, base: str, library_name: str) -> None:
    page.goto(base + reverse("research-create-plan"))
    page.fill("textarea[name=question]", QUESTION)
    page.select_option("select[name=library]", label=library_name)
    page.click("#new-plan button[type=submit]")
    page.wait_for_selector("#plan-editor")


def edit_first_subquestion(page) -> None:
    page.click("#item-s1 a:text('Edit')")  # htmx swaps the card for its form
    page.wait_for_selector("form#item-s1 textarea[name=text]")
    page.fill(
        "form#item-s1 textarea[name=text]", "Do trials show fewer hip fractures with vitamin D?"
    )
    page.click("form#item-s1 button[type=submit]")
    page.wait_for_selector("text=Saved version 2")


def add_counter_query(page) -> None:
    page.click("#item-s1 summary:text('Add a query')")
    form = "#item-s1 details form"
    page.fill(f"{form} input[name=text]", "vitamin D supplementation hip fracture no benefit")
    page.select_option(f"{form} select[name=query_class]", "counter-evidence")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector("text=Saved version 3")


def test_it_plans_edits_runs_and_shows_live_progress(browser_page, servers, author):
    library = ingest_fixture_library()
    base, daphne, worker = servers
    page = browser_page
    login(page, base, "author")

    create_plan(page, base, library.name)
    edit_first_subquestion(page)
    add_counter_query(page)
    page.evaluate("window.notReloaded = true")  # htmx edits never reloaded the page
    assert page.evaluate("window.notReloaded") is True
    assert page.locator(".qclass.qc-counter-evidence").count() >= 4

    page.click("#start-run button[type=submit]")
    page.wait_for_url(lambda url: "/runs/" in url)
    page.locator("#run-status").wait_for()  # no wait_for_function: the CSP forbids eval
    page.evaluate("window.sameDocument = true")
    seen = watch_states(page, timeout_s=420)

    run = Run.objects.get()
    plan = Plan.objects.get()
    assert plan.current_version is not None and plan.current_version.number == 3
    assert run.plan_version.number == 3
    assert page.evaluate("window.sameDocument") is True  # updates came without a reload
    assert seen[-1] == "awaiting_review", seen
    assert len(seen) >= 2, seen  # the state changed on the page while we watched
    wait_for_run(run, {"awaiting_review"}, 30, daphne, worker)
    assert run.plan_version.queries.filter(
        query_class="counter-evidence", text__contains="no benefit"
    ).exists()
    page.reload()  # the finished page renders from the database alone
    status = page.locator("#run-status")
    assert "awaiting review" in status.inner_text().lower()
    assert page.locator("#stages tr[data-stage=retrieving]").count() >= 1
    assert int(page.locator(".counts strong").first.inner_text()) >= 3


def watch_states(page, timeout_s: float) -> list[str]:
    """The run states the page shows, in order, until the pipeline finishes."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = page.get_attribute("#run-status", "data-state")
        if state and (not seen or seen[-1] != state):
            seen.append(state)
        if state in {"awaiting_review", "failed", "cancelled"}:
            return seen
        time.sleep(0.1)
    raise AssertionError(f"the page did not reach a final state: {seen}")
