"""The plan page shows the scope as mining reads it; subquestions and queries can be deleted;
a run refuses to start while an enabled subquestion has no query; follow-ups read cleanly."""

from __future__ import annotations

import pytest
from django.urls import reverse

from research.models import Plan, Run
from research.pipeline.planner import followup_queries, offline_plan
from tests.research.conftest import VITAMIN_D
from tests.research.test_plan_views import create, current, edit

pytestmark = pytest.mark.django_db
SCOPE = "Randomized controlled trials and meta-analyses preferred; adults over 60; zzz qqq"


@pytest.fixture
def plan(client, author, library) -> Plan:
    client.force_login(author)
    assert create(client, library=library.pk, scope=SCOPE).status_code == 302
    return Plan.objects.get(owner=author)


def test_it_shows_the_scope_and_how_mining_reads_it(client, plan):
    page = client.get(plan.get_absolute_url()).content.decode()
    assert SCOPE in page
    assert "meta-analysis, randomized controlled trial: ranked first" in page
    assert "adults aged 60 or over: sources on other ages, animals or cells left out" in page
    assert "zzz qqq (not applied)" in page


def test_it_edits_the_scope_and_the_next_run_records_it(client, plan):
    response = edit(client, plan, "scope", scope="RCTs only; since 2010")
    assert "Scope changed" in response.content.decode()
    plan.refresh_from_db()
    assert plan.scope == "RCTs only; since 2010"
    assert current(plan)[0] == 1  # a plan field: no new version
    assert "randomized controlled trial: others left out" in response.content.decode()
    client.post(reverse("research-start-run", args=[plan.code]), {"base_version": 1})
    assert Run.objects.get().config["scope"] == "RCTs only; since 2010"


def test_it_refuses_a_reader_editing_the_scope(client, plan, reviewer):
    client.force_login(reviewer)
    response = edit(client, plan, "scope", scope="children")
    assert response.status_code in (403, 404)
    plan.refresh_from_db()
    assert plan.scope == SCOPE


def test_it_deletes_a_query_and_a_subquestion_into_a_new_version(client, plan):
    _, content = current(plan)
    sq = content.subquestions[-1]
    query = content.subquestions[0].queries[0]
    edit(client, plan, "delete_query", key=query.key)
    number, content = current(plan)
    assert number == 2 and query.key not in {q.key for s in content.subquestions for q in s.queries}
    edit(client, plan, "delete_subquestion", key=sq.key)
    number, content = current(plan)
    assert number == 3 and sq.key not in {s.key for s in content.subquestions}
    page = client.get(reverse("research-diff-plan", args=[plan.code]) + "?a=1&b=3")
    assert f"subquestion {sq.key}" in page.content.decode()  # the history keeps it


def test_it_refuses_to_delete_the_last_subquestion(client, plan):
    _, content = current(plan)
    for sq in content.subquestions[1:]:
        edit(client, plan, "delete_subquestion", key=sq.key)
    last = current(plan)[1].subquestions[0].key
    response = edit(client, plan, "delete_subquestion", key=last)
    assert "at least one subquestion" in response.content.decode()
    assert len(current(plan)[1].subquestions) == 1


def test_it_warns_and_refuses_a_run_while_an_enabled_subquestion_has_no_query(client, plan):
    edit(client, plan, "add_subquestion", text="Who funds the trials?", priority=1, budget=3)
    number, content = current(plan)
    new = content.subquestions[-1]
    page = client.get(plan.get_absolute_url()).content.decode()
    assert f"Subquestion {new.key} has no enabled query" in page
    response = client.post(
        reverse("research-start-run", args=[plan.code]), {"base_version": number}
    )
    assert f"Subquestion {new.key} has no enabled query" in response.content.decode()
    assert not Run.objects.exists()


def test_it_writes_followup_queries_from_the_question_terms_not_the_subquestion_prose():
    plan = offline_plan(VITAMIN_D)
    definition = next(sq for sq in plan.subquestions if sq.dimension == "definition")
    assert "exactly" in definition.text  # "What exactly are … and who counts as …"
    found = followup_queries(
        definition, plan.question, weak=True, one_sided=True, issued=set(), limit=6, round_no=1
    )
    for f in found:
        assert not {"exactly", "counts", "who", "what"} & set(f.text.lower().split()), f.text
        assert f.text.startswith("vitamin D supplementation")
