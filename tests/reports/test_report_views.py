from __future__ import annotations

import pytest
from django.db import connection
from django.urls import reverse

from ledger.models import Verdict
from reports.build import do_build_report
from reports.export import FORMATS
from research import runner
from research.models import RunState
from tests.reports.conftest import APPROVED, REJECTED, claim_from_source


@pytest.fixture
def report(scene, run, author):
    return do_build_report(run, author)


def urls_for(run, report):
    return [
        reverse("review-list-reports", args=[run.code]),
        reverse("review-show-report", args=[report.code]),
        reverse("review-show-report-version", args=[run.code, 1]),
        reverse("review-export-report", args=[report.code, "md"]),
        reverse("review-diff-runs", args=[run.code]),
    ]


@pytest.mark.django_db
def test_it_hides_reports_from_outsiders(client, outsider, run, report):
    client.force_login(outsider)
    for url in urls_for(run, report):
        assert client.get(url).status_code == 404, url
    assert client.post(reverse("review-create-report", args=[run.code])).status_code == 404


@pytest.mark.django_db
def test_it_forbids_read_only_members_to_build(client, researcher, run, report):
    client.force_login(researcher)
    for url in urls_for(run, report):
        assert client.get(url).status_code in (200, 302), url
    response = client.post(reverse("review-create-report", args=[run.code]))
    assert response.status_code == 403
    assert run.reports.count() == 1


@pytest.mark.django_db
def test_it_builds_a_report_and_shows_it(client, reviewer, scene, run):
    client.force_login(reviewer)
    page = client.get(reverse("review-list-reports", args=[run.code]))
    assert b"Build report" in page.content
    response = client.post(reverse("review-create-report", args=[run.code]))
    # The request only queues the synthesizing stage: nothing is built inside it.
    assert response.status_code == 302
    assert response["Location"] == run.get_absolute_url()
    assert not run.reports.exists()
    run.refresh_from_db()
    assert run.state == RunState.SYNTHESIZING
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT args ->> 'run_code' FROM procrastinate_jobs "
            "WHERE task_name = 'research.advance_run'"
        )
        assert cursor.fetchall() == [(str(run.code),)]
    assert runner.step(run.code).state == RunState.DONE  # what the worker does
    report = run.reports.get()
    page = client.get(run.get_absolute_url()).content.decode()
    assert f'href="{report.get_absolute_url()}"' in page and "report version 1" in page
    page = client.get(report.get_absolute_url())
    assert page.status_code == 200
    assert APPROVED[0] in page.content.decode()
    assert REJECTED not in page.content.decode()
    assert "Appendix A" in page.content.decode()


@pytest.mark.django_db
def test_it_says_why_when_the_gate_is_closed(client, reviewer, run, sub):
    claim_from_source(run, "Drug A lowers pain.", title="T", sub=sub, status=Verdict.UNCERTAIN)
    client.force_login(reviewer)
    response = client.post(reverse("review-create-report", args=[run.code]), follow=True)
    assert "review gate is closed" in response.content.decode()
    assert not run.reports.exists()


@pytest.mark.django_db
def test_it_redirects_a_version_url_to_its_report(client, author, run, report):
    client.force_login(author)
    response = client.get(reverse("review-show-report-version", args=[run.code, 1]))
    assert response["Location"] == report.get_absolute_url()
    assert client.get(reverse("review-show-report-version", args=[run.code, 9])).status_code == 404


@pytest.mark.django_db
def test_it_downloads_every_format(client, author, report):
    client.force_login(author)
    expected = {"md": "text/markdown", "html": "text/html", "zip": "application/zip"}
    expected |= {"bib": "application/x-bibtex", "csl": "application/vnd.citationstyles"}
    for fmt, content_type in expected.items():
        response = client.get(reverse("review-export-report", args=[report.code, fmt]))
        assert response.status_code == 200, fmt
        assert response["Content-Type"].startswith(content_type)
        assert f"-v1.{FORMATS[fmt][1]}" in response["Content-Disposition"]
    response = client.get(reverse("review-export-report", args=[report.code, "docx"]))
    assert response.status_code == 404


@pytest.mark.django_db
def test_it_refuses_an_export_naming_the_claim_after_tampering(client, author, scene, report):
    claim = scene["approved"][0]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ledger_snapshot SET text = upper(text) WHERE id = %s",
            [claim.evidence.get().snapshot_id],
        )
    client.force_login(author)
    response = client.get(reverse("review-export-report", args=[report.code, "html"]))
    assert response.status_code == 409
    assert str(claim.code) in response.content.decode()
    assert "quote no longer matches" in response.content.decode()


@pytest.mark.django_db
def test_it_shows_the_run_diff(client, author, plan, run, scene):
    from tests.factories import make_plan, make_run

    rerun = make_run(plan, previous_run=run)
    client.force_login(author)
    page = client.get(reverse("review-diff-runs", args=[rerun.code])).content.decode()
    assert str(run.code) in page
    assert "removed" in page
    first = reverse("review-diff-runs", args=[run.code])
    assert "Pick a run" in client.get(first).content.decode()
    page = client.get(first, {"against": str(rerun.code)}).content.decode()
    assert page.count("<td>added</td>") == 5
    other = make_run(make_plan(author, question="Another plan?"))
    assert client.get(first, {"against": str(other.code)}).status_code == 404
    assert client.get(first, {"against": "not-a-uuid"}).status_code == 404


@pytest.mark.django_db
def test_it_says_so_when_a_stored_document_is_of_another_format(client, author, report):
    from reports.models import Report

    Report.objects.filter(pk=report.pk).update(outline={"format": "evidence-bureau-report/1"})
    client.force_login(author)
    page = client.get(report.get_absolute_url())
    assert page.status_code == 200
    assert "This version cannot be shown" in page.content.decode()
    response = client.get(reverse("review-export-report", args=[report.code, "md"]))
    assert response.status_code == 409
    assert "build a new report version" in response.content.decode()
