from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from research import services
from research.models import Plan, PlanVersion, Run
from research.pipeline.records import parse_plan
from tests.factories import add_member
from tests.research.conftest import VITAMIN_D, htmx

pytestmark = pytest.mark.django_db


def create(client, question: str = VITAMIN_D, **extra):
    return client.post(reverse("research-create-plan"), {"question": question, **extra})


def current(plan: Plan):
    plan.refresh_from_db()
    version = plan.current_version
    assert version is not None
    return version.number, parse_plan(version.content)


def edit(client, plan: Plan, op: str, **data):
    url = reverse("research-edit-plan", args=[plan.code])
    base = data.pop("base_version", None) or current(plan)[0]
    return htmx(client, url, {"op": op, "base_version": base, **data})


@pytest.fixture
def plan(client, author, library) -> Plan:
    client.force_login(author)
    response = create(client, library=library.pk)
    assert response.status_code == 302
    return Plan.objects.get(owner=author)


def test_it_creates_a_plan_with_a_proposed_first_version(client, author):
    client.force_login(author)

    response = create(client)

    plan = Plan.objects.get()
    assert response.url == plan.get_absolute_url()
    number, content = current(plan)
    assert number == 1
    assert len(content.subquestions) >= 6
    page = client.get(plan.get_absolute_url()).content.decode()
    assert "does not reduce" in page and "counter-evidence" in page


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("", "The question is empty"),
        ("   ", "The question is empty"),
        ("why " * 2500, "the limit is 2,000"),
    ],
)
def test_it_refuses_a_bad_question_with_a_message_and_creates_nothing(
    client, author, question, message
):
    client.force_login(author)

    response = create(client, question)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Plan.objects.exists()


def test_it_lets_only_researchers_create(client, reviewer):
    client.force_login(reviewer)

    assert client.get(reverse("research-create-plan")).status_code == 403
    assert create(client).status_code == 403
    assert not Plan.objects.exists()


def test_it_edits_a_subquestion_into_a_new_version_with_stable_keys(client, plan):
    before_number, before = current(plan)
    key = before.subquestions[1].key

    response = edit(
        client,
        plan,
        "edit_subquestion",
        key=key,
        text="Edited text of it?",
        dimension="counter",
        priority=5,
        budget=7,
        enabled="on",
    )

    assert response.status_code == 200
    assert "Saved version 2" in response.content.decode()
    number, after = current(plan)
    assert number == before_number + 1
    assert [sq.key for sq in after.subquestions] == [sq.key for sq in before.subquestions]
    assert after.subquestions[1].text == "Edited text of it?"
    assert after.subquestions[1].budget == 7
    assert PlanVersion.objects.get(plan=plan, number=1).content == plan.versions.first().content


def test_it_adds_a_counter_evidence_query(client, plan):
    _, before = current(plan)
    sq = before.subquestions[0]

    edit(
        client,
        plan,
        "add_query",
        subquestion=sq.key,
        text="vitamin D fractures null trial",
        query_class="counter-evidence",
        source_classes=["library", "paper"],
        priority=3,
    )

    _, after = current(plan)
    added = after.subquestions[0].queries[-1]
    assert added.text == "vitamin D fractures null trial"
    assert added.query_class == "counter-evidence"
    assert added.source_classes == ["library", "paper"]
    assert added.key not in {q.key for q in sq.queries}
    assert plan.current_version.queries.filter(key=added.key).exists()


def test_it_refuses_a_duplicate_query_and_keeps_the_input(client, plan):
    _, before = current(plan)
    existing = before.subquestions[2].queries[0].text

    response = edit(
        client,
        plan,
        "add_query",
        subquestion=before.subquestions[0].key,
        text=existing.upper(),
        query_class="definition",
        priority=1,
    )

    page = response.content.decode()
    assert "Duplicate query" in page
    assert existing.upper() in page  # the user's input is shown again, not lost
    assert current(plan)[0] == 1


@pytest.mark.parametrize(
    ("op", "field", "message"),
    [
        ("settings", "queries", "query budget must be at least 1"),
        ("settings", "documents", "documents budget must be at least 1"),
        ("edit_subquestion", "budget", "query budget must be at least 1"),
    ],
)
def test_it_refuses_a_zero_budget(client, plan, op, field, message):
    _, content = current(plan)
    sq = content.subquestions[0]
    data = {
        "key": sq.key,
        "text": sq.text,
        "priority": 1,
        "budget": 3,
        "enabled": "on",
        **content.budgets.model_dump(),
        field: 0,
    }

    response = edit(client, plan, op, **data)

    assert message in response.content.decode()
    assert current(plan)[0] == 1


def test_it_refuses_a_stale_edit_with_a_conflict_and_loses_nothing(client, plan):
    _, content = current(plan)
    sq = content.subquestions[0]
    edit(client, plan, "toggle_query", key=sq.queries[0].key)  # someone else saves v2

    response = edit(
        client,
        plan,
        "edit_subquestion",
        base_version=1,
        key=sq.key,
        text="My careful rewording of the subquestion",
        priority=2,
        budget=4,
    )

    page = response.content.decode()
    assert "you started from version 1, and version 2 has been saved since" in page
    assert "My careful rewording of the subquestion" in page
    assert 'name="base_version" value="2"' in page  # one click applies it to v2
    number, after = current(plan)
    assert number == 2
    assert after.subquestions[0].text == sq.text


def test_it_refuses_a_stale_edit_without_htmx_with_409(client, plan):
    edit(client, plan, "toggle_subquestion", key="s2")
    url = reverse("research-edit-plan", args=[plan.code])

    response = client.post(url, {"op": "toggle_subquestion", "key": "s3", "base_version": 1})

    assert response.status_code == 409
    assert "changed while you were editing" in response.content.decode()


def test_it_reorders_and_disables(client, plan):
    _, before = current(plan)
    first, second = before.subquestions[0].key, before.subquestions[1].key

    edit(client, plan, "move_subquestion", key=second, direction="up")
    edit(client, plan, "toggle_subquestion", key=first)
    q1, q2 = (q.key for q in before.subquestions[0].queries[:2])
    edit(client, plan, "move_query", key=q2, direction="up")

    number, after = current(plan)
    assert number == 4
    assert [sq.key for sq in after.subquestions[:2]] == [second, first]
    assert after.subquestions[1].enabled is False
    assert [q.key for q in after.subquestions[1].queries[:2]] == [q2, q1]
    response = edit(client, plan, "move_subquestion", key=second, direction="up")
    assert "already at the edge" in response.content.decode()


def test_it_diffs_two_versions(client, plan):
    _, before = current(plan)
    sq = before.subquestions[0]
    edit(
        client,
        plan,
        "edit_subquestion",
        key=sq.key,
        text="A sharper subquestion",
        priority=3,
        budget=5,
        enabled="on",
    )
    edit(
        client,
        plan,
        "add_query",
        subquestion=sq.key,
        text="brand new query words",
        query_class="temporal",
        priority=1,
    )

    page = client.get(reverse("research-diff-plan", args=[plan.code]), {"a": 1, "b": 3})

    html = page.content.decode()
    assert "A sharper subquestion" in html and sq.text in html
    assert "brand new query words" in html and "added" in html


def test_it_refuses_to_start_a_plan_with_every_query_disabled(client, plan):
    _, content = current(plan)
    for sq in content.subquestions:
        for q in sq.queries:
            q.enabled = False
    services.check_save_plan(plan.owner, plan, plan.current_version.number, content, "all off")

    response = htmx(
        client,
        reverse("research-start-run", args=[plan.code]),
        {"base_version": plan.current_version.number},
    )

    assert "Every query is disabled" in response.content.decode()
    assert not Run.objects.exists()
    assert _jobs() == 0


def test_it_refuses_to_start_without_anything_to_search(client, author):
    client.force_login(author)
    create(client)
    plan = Plan.objects.get()

    response = client.post(reverse("research-start-run", args=[plan.code]), {"base_version": 1})

    assert response.status_code == 400
    assert "There is nothing to search" in response.content.decode()
    assert not Run.objects.exists()


def test_it_starts_a_run_and_queues_its_first_step(client, plan):
    response = client.post(reverse("research-start-run", args=[plan.code]), {"base_version": 1})

    run = Run.objects.get()
    assert response.url == run.get_absolute_url()
    assert run.state == "queued" and run.config["library"] == str(plan.library.code)
    assert run.budgets["queries"] == 40
    assert _jobs() == 1
    page = client.get(run.get_absolute_url()).content.decode()
    assert 'id="run-status"' in page and "Cancel run" in page


def test_it_cancels_a_queued_run_at_once(client, plan):
    client.post(reverse("research-start-run", args=[plan.code]), {"base_version": 1})
    run = Run.objects.get()

    client.post(reverse("research-cancel-run", args=[run.code]))

    run.refresh_from_db()
    assert run.state == "cancelled" and run.cancel_requested
    assert "Cancelled by author" in run.stop_reason
    again = client.post(reverse("research-cancel-run", args=[run.code]), follow=True)
    assert "already ended" in again.content.decode()


def test_it_hides_plans_from_outsiders(client, plan, outsider):
    client.force_login(outsider)

    for name in ("research-show-plan", "research-diff-plan"):
        assert client.get(reverse(name, args=[plan.code])).status_code == 404
    assert edit(client, plan, "toggle_subquestion", key="s1").status_code == 404
    assert client.post(reverse("research-start-run", args=[plan.code])).status_code == 404


def test_it_shows_plans_read_only_to_reviewer_members(client, plan, reviewer):
    add_member(plan, reviewer)
    client.force_login(reviewer)

    page = client.get(plan.get_absolute_url())
    assert page.status_code == 200
    assert "Start run" not in page.content.decode()
    assert edit(client, plan, "toggle_subquestion", key="s1").status_code == 403
    url = reverse("research-start-run", args=[plan.code])
    assert client.post(url, {"base_version": 1}).status_code == 403
    assert current(plan)[0] == 1 and not Run.objects.exists()


def _jobs() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'research.advance_run'"
        )
        row = cursor.fetchone()
    assert row is not None
    return int(row[0])


def test_it_shows_why_the_llm_plan_was_not_used(client, author, settings):
    from tests.processes import free_port

    settings.LLM_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    settings.LLM_MODEL = "tiny"
    settings.LLM_TIMEOUT_S = 2.0
    client.force_login(author)

    create(client)

    plan = Plan.objects.get()
    page = client.get(plan.get_absolute_url()).content.decode()
    assert "The language model could not be asked" in page
    assert "showing the offline plan instead" in page
    assert current(plan)[1].planner == "offline-rules-v1"


def test_it_escapes_an_unknown_key_in_the_edit_form(client, plan):
    url = reverse("research-show-edit-form", args=[plan.code])

    response = htmx(client, url + "?key=<script>alert(1)</script>", method="get")

    page = response.content.decode()
    assert "<script>" not in page and "&lt;script&gt;" in page
