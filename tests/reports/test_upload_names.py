"""Uploaded documents are named in a report by their title and their library's name, never
by ``upload-<uuid>``, ``sha256:…`` or a library code; Appendix D names the library and the
state the run ends in when the synthesizing stage builds the report (issue 26.9)."""

from __future__ import annotations

import pytest

from reports.build import check_request_report, do_build_report
from reports.export import do_export_report
from reports.integrity import report_document
from research import runner
from research.models import RunState
from review.services.decisions import do_approve_claim
from tests.factories import make_claim, make_library, make_passage, make_snapshot
from tests.reports.conftest import APPROVED

pytestmark = pytest.mark.django_db

LIBRARY = "Cardiology notes"


def uploaded(run, library, text, *, canonical_id, title, metadata):
    snapshot = make_snapshot(f"Introduction. {text} Limitations follow.", title=title)
    source = snapshot.source
    source.canonical_id, source.metadata, source.source_type = canonical_id, metadata, "file"
    source.save(update_fields=["canonical_id", "metadata", "source_type"])
    source.libraries.add(library)
    sub = run.plan_version.subquestions.first()
    return make_claim(run, text, quote=text, passage=make_passage(snapshot), subquestion=sub)


@pytest.fixture
def library(author):
    return make_library(LIBRARY, owner=author)


@pytest.fixture
def named_run(run, library, reviewer):
    run.config = {**(run.config or {}), "library": str(library.code)}
    run.save(update_fields=["config"])
    claims = [
        uploaded(
            run,
            library,
            APPROVED[0],
            canonical_id="sha256:" + "ab" * 32,
            title="Aspirin after myocardial infarction",  # the extracted title
            metadata={"filename": "aspirin-trial.pdf"},
        ),
        uploaded(
            run,
            library,
            APPROVED[1],
            canonical_id=f"corpus:upload-{library.code}:doc-7",
            title="",
            metadata={"corpus": f"upload-{library.code}", "doc_id": "doc-7"},
        ),
    ]
    for claim in claims:
        do_approve_claim(reviewer, claim, claim.version)
    return run


def test_a_reference_names_an_upload_by_its_title_and_library(named_run, library, author):
    report = do_build_report(named_run, author)
    document = report_document(report)
    references = {entry.title: entry.reference for entry in document.bibliography}

    assert set(references) == {"Aspirin after myocardial infarction", "doc-7"}
    for reference in references.values():
        assert LIBRARY in reference
        assert "sha256:" not in reference and "upload-" not in reference, reference
        assert str(library.code) not in reference
    for fmt in ("md", "html", "bib", "csl"):
        text = do_export_report(report, fmt, author).data.decode()
        assert "upload-" not in text.replace("upload-batch", ""), fmt
        assert f"upload-{library.code}" not in text and "sha256:abab" not in text, fmt


def test_appendix_d_names_the_library_and_the_state_the_run_ends_in(
    named_run, library, reviewer, author
):
    check_request_report(reviewer, named_run, enqueue=False)
    assert runner.step(named_run.code).state == RunState.DONE
    report = named_run.reports.get()
    document = report_document(report)

    assert document.appendix_d.run_state == RunState.DONE
    stages = {row.stage: row.status for row in document.appendix_d.stages}
    assert stages[RunState.SYNTHESIZING] == "done"
    markdown = report.markdown
    appendix = markdown.split("Appendix D", 2)[-1].split("Appendix E", 1)[0]
    assert f"library: {LIBRARY} ({str(library.code)[:8]})" in appendix
    assert str(library.code) not in appendix and "(synthesizing)" not in appendix
    assert "(done)" in appendix
    html = do_export_report(report, "html", author).data.decode()
    assert f"library: {LIBRARY} ({str(library.code)[:8]})" in html
