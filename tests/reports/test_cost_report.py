"""Cost and time per run in what people read: the run page and the report's method
section show what each stage recorded (issue 25); the synthesizing stage's LLM tokens."""

from __future__ import annotations

import re

import pytest

from reports.build import check_request_report, do_build_report
from reports.export import render_format
from reports.exports.html import render_html
from reports.integrity import report_document
from research import runner
from research.models import RunState, StageCheckpoint, StageStatus
from research.providers import usage
from tests.fake_openai import fake_openai
from tests.reports.test_llm_writer import restates

pytestmark = pytest.mark.django_db

TOKENS = {"prompt_tokens": 120, "completion_tokens": 30}


@pytest.fixture
def llm_server(settings):
    with fake_openai(restates, usage=TOKENS) as fake:
        settings.LLM_BASE_URL = fake.url
        settings.LLM_MODEL = "fake-writer"
        yield fake


def synthesizing_cost(run) -> usage.Cost:
    cp = run.checkpoints.get(stage=RunState.SYNTHESIZING)
    return usage.Cost.from_json(cp.counters["cost"])


def test_a_stage_that_calls_the_llm_records_its_tokens(llm_server, scene, run, reviewer):
    check_request_report(reviewer, run, enqueue=False)
    assert runner.step(run.code).state == RunState.DONE
    cost = synthesizing_cost(run)
    calls = len(llm_server.requests)
    assert calls >= 1
    llm = cost.families["llm"]
    assert (llm.calls, llm.prompt_tokens, llm.completion_tokens) == (calls, 120 * calls, 30 * calls)
    assert llm.seconds > 0 and cost.wall_s > 0 and cost.cpu_s >= 0

    check_request_report(reviewer, run, enqueue=False)  # a second version
    assert runner.step(run.code).state == RunState.DONE
    again = synthesizing_cost(run)
    assert again.llm.calls == len(llm_server.requests) > calls  # both builds counted
    assert again.wall_s > cost.wall_s


# --- the run page and the report's method section -----------------------------------------

SEARCHING = {
    "wall_s": 1.5,
    "cpu_s": 0.3,
    "families": {"encoder": {"calls": 3, "seconds": 0.5, "items": 12}},
}
MINING = {
    "wall_s": 12.2,
    "cpu_s": 3.4,
    "families": {
        "llm": {"calls": 2, "seconds": 9.0, "prompt_tokens": 1500, "completion_tokens": 300},
        "encoder": {"calls": 1, "seconds": 0.3, "items": 40},
    },
}


def spent(of_run, stage, cost, **counters):
    StageCheckpoint.objects.create(
        run=of_run,
        stage=stage,
        status=StageStatus.DONE,
        counters={**counters, "wall_s": cost["wall_s"] + 1, "cost": cost},
    )


def test_the_run_page_shows_each_stages_cost_and_the_runs_total(client, reviewer, run):
    spent(run, "searching", SEARCHING, hits=17)
    spent(run, "mining", MINING, claims=58)
    client.force_login(reviewer)
    html = client.get(run.get_absolute_url()).content.decode()
    assert "<th>Models</th>" in html
    assert "<td>hits: 17</td>" in html and "cost:" not in html  # counts stay counts
    assert "1.5 s of work (CPU 0.3 s)" in html
    models = re.findall(r'<td class="stage-models">([^<]*)</td>', html)
    assert models == [
        "encoder: 3 calls, 12 items, 0.5 s",
        "encoder: 1 call, 40 items, 0.3 s; llm: 2 calls, 1,500 tokens in, 300 out, 9.0 s",
    ]
    total = re.search(r'<p id="run-cost">([^<]*)</p>', html)
    assert total is not None
    assert total.group(1) == (
        "Run total: 13.7 s of work (CPU 3.7 s); LLM: 2 calls, 1,500 tokens in, 300 out, 9.0 s;"
        " model calls: encoder 4, llm 2."
    )


def test_the_run_page_says_nothing_of_cost_before_a_stage_recorded_any(client, reviewer, run):
    StageCheckpoint.objects.create(run=run, stage="searching", status=StageStatus.RUNNING)
    client.force_login(reviewer)
    html = client.get(run.get_absolute_url()).content.decode()
    assert 'id="run-cost"' not in html and "of work" not in html


def test_the_method_section_states_the_runs_cost_in_every_format(scene, run, author):
    spent(run, "searching", SEARCHING)
    spent(run, "mining", MINING)
    spent(run, "synthesizing", {"wall_s": 99.0, "cpu_s": 99.0, "families": {}})  # left out
    report = do_build_report(run, author)
    method = report.outline["appendix_d"]["method"]
    lines = [line for line in method if "of work" in line or line.startswith("Model use")]
    assert lines == [
        "Cost and time of this run before the report was built, as its stages recorded them:"
        " 13.7 s of work (CPU 3.7 s); LLM: 2 calls, 1,500 tokens in, 300 out, 9.0 s;"
        " model calls: encoder 4, llm 2.",
        "Seconds of work per stage (CPU seconds in brackets): Searching 1.5 (0.3),"
        " Mining 12.2 (3.4).",
        "Model use per stage: Searching: encoder (3 calls, 12 items, 0.5 s); Mining: encoder"
        " (1 call, 40 items, 0.3 s), llm (2 calls, 1,500 tokens in, 300 out, 9.0 s).",
    ]
    assert "13.7 s of work (CPU 3.7 s)" in report.markdown
    html = render_html(report_document(report))
    assert "Mining 12.2 (3.4)" in html
    # frozen with the version: later spending never changes its exports
    before = render_format(report, report_document(report), "md")
    spent(run, "countering", SEARCHING)
    assert render_format(report, report_document(report), "md") == before
