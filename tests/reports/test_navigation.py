"""Navigation to reports and run diffs, the run page's stage table, and what the reports
page says a report will and will not print."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from ledger.models import Verdict
from reports.build import do_build_report
from reports.integrity import report_document
from research.models import RunState, StageCheckpoint, StageStatus
from review.diff import RunDiffRecord
from review.models import RunDiff
from review.services.decisions import do_approve_claim
from tests.factories import make_run
from tests.reports.conftest import APPROVED, claim_from_source

pytestmark = pytest.mark.django_db

UNCERTAIN = "Vitamin K may slow bone loss in postmenopausal women."


@pytest.fixture
def done_run(scene, run, author):
    """A reported run whose plan has an earlier run it was diffed against."""
    earlier = make_run(run.plan_version.plan)
    data = RunDiffRecord(old_run=str(earlier.code), new_run=str(run.code)).model_dump(mode="json")
    RunDiff.objects.create(run=run, against=earlier, data=data, carried_over=3, needs_review=2)
    report = do_build_report(run, author)
    run.state = RunState.DONE
    run.save(update_fields=["state"])
    return run, report


def hrefs(html: bytes) -> set[str]:
    return set(re.findall(r'href="([^"]+)"', html.decode()))


def test_it_links_reports_the_latest_report_and_the_diff_from_run_ledger_and_plan(
    client, reviewer, done_run
):
    run, report = done_run
    client.force_login(reviewer)
    wanted = {
        reverse("review-list-reports", args=[run.code]),
        report.get_absolute_url(),
        reverse("review-diff-runs", args=[run.code]),
    }
    pages = {
        "run": run.get_absolute_url(),
        "ledger": reverse("review-show-ledger", args=[run.code]),
        "plan": run.plan_version.plan.get_absolute_url(),
    }
    for name, url in pages.items():
        found = hrefs(client.get(url).content)
        assert wanted <= found, (name, wanted - found)
    run_page = client.get(run.get_absolute_url()).content.decode()
    assert "Done" in run_page and "report version 1" in run_page


def test_it_labels_rounds_only_on_repeated_stages_and_lists_counts_without_a_trailing_comma(
    client, reviewer, run
):
    def checkpoint(stage, round_, counters, notes=None):
        StageCheckpoint.objects.create(
            run=run,
            stage=stage,
            round=round_,
            status=StageStatus.DONE,
            counters=counters,
            notes=notes or {},
        )

    checkpoint("searching", 0, {"hits": 170, "issued": 17, "wall_s": 6.0})
    checkpoint("searching", 1, {"hits": 20, "wall_s": 0.2})
    checkpoint("mining", 1, {"claims": 58, "wall_s": 4.9})
    checkpoint("verifying", 1, {"pass": 18, "wall_s": 49.1, "fail": 18})
    client.force_login(reviewer)
    html = client.get(run.get_absolute_url()).content.decode()
    rows = re.findall(r'<tr class="stage-done" data-stage="(\w+)">\s*<td>([^<]*)</td>', html)
    assert rows == [
        ("searching", "Searching"),
        ("searching", "Searching (follow-up round 1)"),
        ("mining", "Mining"),
        ("verifying", "Verifying"),
    ]
    assert "(round 1)" not in html
    assert "hits: 170, issued: 17<" in html
    # (jsonb stores keys in its own order: shorter keys first)
    assert "<td>claims: 58</td>" in html and "<td>fail: 18, pass: 18</td>" in html
    assert not re.search(r",\s*</td>", html)


def test_it_serves_a_favicon_from_every_page(client, reviewer, run):
    client.force_login(reviewer)
    html = client.get(run.get_absolute_url()).content.decode()
    match = re.search(r'<link rel="icon" href="([^"]+)"', html)
    assert match and match.group(1).endswith("favicon.svg")
    assert finders.find("favicon.svg")


def test_it_says_before_building_what_the_report_prints_and_leaves_out(
    client, reviewer, scene, run, sub
):
    uncertain = claim_from_source(
        run, UNCERTAIN, title="Vitamin K trial", sub=sub, status=Verdict.UNCERTAIN
    )
    do_approve_claim(reviewer, uncertain, uncertain.version, note="plausible, one trial reports it")
    client.force_login(reviewer)
    html = client.get(reverse("review-list-reports", args=[run.code])).content.decode()
    preview = html[html.index('id="report-preview"') :]
    assert "<strong>2</strong> approved claims with a verified supporting quote" in preview
    assert "<strong>1</strong> approved claim without verified support" in preview
    assert UNCERTAIN in preview and "verdict UNCERTAIN" in preview
    left_out = re.findall(r'<span class="preview-left-out">([^<]+)</span>', preview)
    assert left_out == [
        "2 rejected by a reviewer",
        "1 not reviewed: only approved claims are printed",
    ]


def test_it_prints_an_approved_uncertain_claim_marked_instead_of_dropping_it(
    reviewer, author, scene, run, sub
):
    uncertain = claim_from_source(
        run, UNCERTAIN, title="Vitamin K trial", sub=sub, status=Verdict.UNCERTAIN
    )
    # The verifiers judged the anchor insufficient: no supporting quote at all.
    uncertain.evidence.update(relation="insufficient")
    do_approve_claim(reviewer, uncertain, uncertain.version, note="plausible, one trial reports it")

    report = do_build_report(run, author)

    document = report_document(report)
    assert str(uncertain.code) in report.claim_codes
    [row] = [c for c in document.claims if c.code == str(uncertain.code)]
    assert "verdict UNCERTAIN" in row.unsupported
    [evidence] = [e for e in document.appendix_b if e.claim_code == str(uncertain.code)]
    assert evidence.quote == UNCERTAIN and evidence.relation == "insufficient"
    assert str(uncertain.code) not in {x.code for x in document.appendix_a}
    assert UNCERTAIN.rstrip(".") in report.markdown
    assert "approved without verified support" in report.markdown
    for text in APPROVED:
        assert text.rstrip(".") in report.markdown
