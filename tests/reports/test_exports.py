from __future__ import annotations

import io
import json

import pytest
from django.db import connection
from pypdf import PdfReader

from reports.build import do_build_report
from reports.export import FORMATS, ExportRefused, do_export_report
from reports.models import Export
from tests.reports.bundles import zip_text
from tests.reports.conftest import APPROVED, WITHHELD


def pdf_text(data):
    return " ".join(
        " ".join((p.extract_text() or "").split()) for p in PdfReader(io.BytesIO(data)).pages
    )


@pytest.fixture
def report(scene, run, author):
    return do_build_report(run, author)


@pytest.mark.django_db
def test_it_never_exports_the_text_of_a_rejected_or_unreviewed_claim(report, author):
    outputs = {}
    for fmt in ("md", "html", "bib", "csl"):
        outputs[fmt] = do_export_report(report, fmt, author).data.decode()
    outputs["pdf"] = pdf_text(do_export_report(report, "pdf", author).data)
    for name, text in zip_text(do_export_report(report, "zip", author).data).items():
        outputs[f"zip:{name}"] = text
    for where, text in outputs.items():
        for withheld in WITHHELD:
            assert withheld not in text, (where, withheld)
            assert withheld.rstrip(".") not in " ".join(text.split()), (where, withheld)
    for fmt in ("md", "html", "pdf"):
        assert APPROVED[0].rstrip(".") in outputs[fmt], fmt
    assert Export.objects.filter(report=report).count() == 6


@pytest.mark.django_db
def test_it_prints_a_real_pdf_with_the_report_headings(report, author):
    export = do_export_report(report, "pdf", author)
    assert export.data.startswith(b"%PDF-")
    text = pdf_text(export.data)
    for heading in ("Does X cause Y?", "References", "Appendix A", "Appendix B", "Appendix E"):
        assert heading in text, heading


@pytest.mark.django_db
def test_it_escapes_hostile_evidence_in_html(run, sub, reviewer, author):
    from review.services.decisions import do_approve_claim
    from tests.reports.conftest import claim_from_source

    hostile = "The <script>alert(1)</script> dose lowers pain in adults."
    claim = claim_from_source(run, hostile, title="Hostile page", sub=sub)
    do_approve_claim(reviewer, claim, claim.version)
    report = do_build_report(run, author)
    html = do_export_report(report, "html", author).data.decode()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>" not in report.markdown


@pytest.mark.django_db
def test_it_refuses_export_naming_the_claim_when_a_snapshot_was_tampered(report, scene, author):
    claim = scene["approved"][1]
    snapshot = claim.evidence.get().snapshot
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ledger_snapshot SET text = replace(text, 'may lower', 'will lower') "
            "WHERE id = %s",
            [snapshot.pk],
        )
    for fmt in ("md", "zip"):
        with pytest.raises(ExportRefused) as refused:
            do_export_report(report, fmt, author)
        assert any(str(claim.code) in p and "C2" in p for p in refused.value.problems)
        assert all(str(scene["approved"][0].code) not in p for p in refused.value.problems)
    assert not Export.objects.exists()


@pytest.mark.django_db
def test_it_refuses_export_when_a_claim_was_rejected_after_the_report(
    report, scene, reviewer, author
):
    from ledger.models import Claim
    from review.services.decisions import do_reject_claim

    claim = Claim.objects.get(pk=scene["approved"][0].pk)
    do_reject_claim(reviewer, claim, claim.version, "outdated")
    with pytest.raises(ExportRefused) as refused:
        do_export_report(report, "html", author)
    assert any("C1" in p and "no longer approved" in p for p in refused.value.problems)


@pytest.mark.django_db
def test_it_exports_bibtex_and_csl_json_of_the_cited_sources(report, author):
    bib = do_export_report(report, "bib", author).data.decode()
    assert bib.count("@") == 2
    assert "title = {Aspirin trial}" in bib
    csl = json.loads(do_export_report(report, "csl", author).data)
    assert [item["id"] for item in csl] == ["src1", "src2"]
    assert csl[0]["title"] == "Aspirin trial"
    assert csl[0]["note"].startswith(
        "url:https://example.org/aspirin-trial; authors, year and venue not in the source metadata"
    )
    assert csl[0]["citation-number"] == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("UPDATE ledger_claim SET fingerprint = 'x' WHERE id = %s", "fingerprint changed"),
        (
            "UPDATE ledger_passage SET fingerprint = 'x' WHERE id IN "
            "(SELECT passage_id FROM ledger_evidencelink WHERE claim_id = %s)",
            "passage fingerprint changed",
        ),
    ],
)
def test_it_refuses_export_when_a_fingerprint_changed(report, scene, author, sql, problem):
    claim = scene["approved"][0]
    with connection.cursor() as cursor:
        cursor.execute(sql, [claim.pk])
    with pytest.raises(ExportRefused) as refused:
        do_export_report(report, "md", author)
    assert any(str(claim.code) in p and problem in p for p in refused.value.problems), (
        refused.value.problems
    )


@pytest.mark.django_db
def test_it_exports_every_format_twice_in_a_row_byte_identically(report, author):
    first = {fmt: do_export_report(report, fmt, author).data for fmt in FORMATS}
    again = {fmt: do_export_report(report, fmt, author).data for fmt in FORMATS}
    assert first == again
    assert first["pdf"].startswith(b"%PDF-")
