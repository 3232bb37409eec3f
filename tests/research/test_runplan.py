from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from research import services
from research.models import Run
from tests.research.fixtures import ingest_fixture_library
from tests.research.test_runner import small_plan

pytestmark = pytest.mark.django_db


def test_it_runs_a_plan_synchronously_and_prints_figures(author, tmp_path):
    library = ingest_fixture_library()
    content = small_plan(rounds=0)
    content.subquestions[1].enabled = False
    plan = services.do_create_plan(author, content)
    out = StringIO()

    call_command(
        "runplan",
        plan=str(plan.code),
        library=library.name,
        user="author",
        json=tmp_path / "run.json",
        stdout=out,
        stderr=StringIO(),
    )

    figures = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    run = Run.objects.get()
    assert figures["state"] == "awaiting_review" == run.state
    assert float(figures["wall_s"]) > 0
    assert float(figures["stage_searching_s"]) > 0 and "stage_verifying_s" in figures
    assert int(figures["queries"]) == 2 and int(figures["claims"]) == run.claims.count()
    assert int(figures["candidates_kept"]) == run.claims.count()
    gaps = {k: int(v) for k, v in figures.items() if k.startswith("ledger_")}
    assert set(gaps) >= {"ledger_without_votes", "ledger_without_quote", "ledger_without_verdict"}
    assert not any(gaps.values()), gaps  # every claim: verdict, quote, votes, rationale, ...
    details = json.loads((tmp_path / "run.json").read_text())
    assert details["run"] == str(run.code)
    assert [s["stage"] for s in details["stages"]][-1] == "verifying"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"question": "", "library": None}, "The question is empty"),
        ({"question": "Does X help?", "library": "no-such-library"}, "No library named"),
        ({"question": "Does X help?", "library": None}, "There is nothing to search"),
    ],
)
def test_it_refuses_bad_input_in_words(author, options, message):
    with pytest.raises(CommandError, match=message):
        call_command(
            "runplan",
            user="author",
            stdout=StringIO(),
            stderr=StringIO(),
            **{k: v for k, v in options.items() if v is not None},
        )
    assert not Run.objects.exists()


def test_it_takes_a_scope_for_a_new_plan_and_mining_applies_it(author, tmp_path):
    library = ingest_fixture_library()
    scope = "Randomized controlled trials and meta-analyses preferred; adults over 60"
    call_command(
        "runplan",
        question="Does vitamin D supplementation reduce the risk of fractures in older adults?",
        scope=scope,
        library=library.name,
        user="author",
        json=tmp_path / "run.json",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    run = Run.objects.get()
    assert run.plan_version.plan.scope == scope
    assert json.loads((tmp_path / "run.json").read_text())["scope"] == scope
    mining = run.checkpoints.get(stage="mining")
    assert mining.cursor["scope"]["preferred_designs"] == ["meta-analysis", "rct"]
    assert mining.cursor["scope"]["age_min"] == 60
    ranked = list(run.claims.order_by("rank"))
    assert ranked and all(c.relevance is not None for c in ranked)
    assert ranked[0].study_design in ("meta-analysis", "rct")  # preferred designs first


def test_it_refuses_a_scope_for_an_existing_plan(author):
    plan = services.do_create_plan(author, small_plan(rounds=0))
    with pytest.raises(CommandError, match="--scope is for a new plan"):
        call_command(
            "runplan", plan=str(plan.code), scope="adults", user="author", stderr=StringIO()
        )
