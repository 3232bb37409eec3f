from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from pypdf import PdfReader

from review import reports
from review.exports.bundle import MANIFEST, sha256_bytes, verify_bundle
from review.models import Export
from tests.reports.conftest import APPROVED, WITHHELD


def zip_text(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def pdf_text(data):
    return " ".join(
        " ".join((p.extract_text() or "").split()) for p in PdfReader(io.BytesIO(data)).pages
    )


def rewrite_zip(data, changes):
    files = zip_text(data)
    files.update(changes)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.fixture
def report(scene, run, author):
    return reports.do_build_report(run, author)


@pytest.mark.django_db
def test_it_never_exports_the_text_of_a_rejected_or_unreviewed_claim(report, author):
    outputs = {}
    for fmt in ("md", "html", "bib", "csl"):
        outputs[fmt] = reports.do_export_report(report, fmt, author).data.decode()
    outputs["pdf"] = pdf_text(reports.do_export_report(report, "pdf", author).data)
    for name, text in zip_text(reports.do_export_report(report, "zip", author).data).items():
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
    export = reports.do_export_report(report, "pdf", author)
    assert export.data.startswith(b"%PDF-")
    text = pdf_text(export.data)
    for heading in ("Does X cause Y?", "References", "Appendix A", "Appendix B", "Appendix E"):
        assert heading in text, heading


@pytest.mark.django_db
def test_it_escapes_hostile_evidence_in_html(run, sub, reviewer, author):
    from review import services
    from tests.reports.conftest import claim_from_source

    hostile = "The <script>alert(1)</script> dose lowers pain in adults."
    claim = claim_from_source(run, hostile, title="Hostile page", sub=sub)
    services.do_approve_claim(reviewer, claim, claim.version)
    report = reports.do_build_report(run, author)
    html = reports.do_export_report(report, "html", author).data.decode()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>" not in report.markdown


@pytest.mark.django_db
def test_it_exports_a_bundle_that_verifies(report, author, tmp_path, capsys):
    data = reports.do_export_report(report, "zip", author).data
    files = zip_text(data)
    manifest = json.loads(files[MANIFEST])
    assert set(manifest["files"]) == set(files) - {MANIFEST}
    assert manifest["report"]["content_hash"] == report.content_hash
    claims = json.loads(files["claims.json"])
    assert [c["text"] for c in claims["approved"]] == APPROVED
    assert all("text" not in c for c in claims["excluded"])
    path = tmp_path / "bundle.zip"
    path.write_bytes(data)
    assert verify_bundle(path) == []
    call_command("verify_bundle", str(path))
    assert "ok" in capsys.readouterr().out
    assert reports.do_export_report(report, "zip", author).data == data  # deterministic


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
        with pytest.raises(reports.ExportRefused) as refused:
            reports.do_export_report(report, fmt, author)
        assert any(str(claim.code) in p and "C2" in p for p in refused.value.problems)
        assert all(str(scene["approved"][0].code) not in p for p in refused.value.problems)
    assert not Export.objects.exists()


@pytest.mark.django_db
def test_it_refuses_export_when_a_claim_was_rejected_after_the_report(
    report, scene, reviewer, author
):
    from ledger.models import Claim
    from review import services

    claim = Claim.objects.get(pk=scene["approved"][0].pk)
    services.do_reject_claim(reviewer, claim, claim.version, "outdated")
    with pytest.raises(reports.ExportRefused) as refused:
        reports.do_export_report(report, "html", author)
    assert any("C1" in p and "no longer approved" in p for p in refused.value.problems)


@pytest.mark.django_db
def test_it_fails_verify_bundle_naming_the_claim_when_a_snapshot_file_is_tampered(
    report, scene, author, tmp_path
):
    data = reports.do_export_report(report, "zip", author).data
    claim = scene["approved"][1]
    sha = claim.evidence.get().snapshot.text_sha256
    name = f"snapshots/{sha}.txt"
    tampered = zip_text(data)[name].replace("may lower", "will lower")
    path = tmp_path / "tampered.zip"
    path.write_bytes(rewrite_zip(data, {name: tampered}))
    problems = verify_bundle(path)
    assert any(name in p and "manifest" in p for p in problems)
    assert any(str(claim.code) in p and "quote E2" in p for p in problems)
    with pytest.raises(CommandError):
        call_command("verify_bundle", str(path))


@pytest.mark.django_db
def test_it_fails_verify_bundle_even_when_the_tamperer_rehashes_everything(
    report, scene, author, tmp_path
):
    data = reports.do_export_report(report, "zip", author).data
    files = zip_text(data)
    claim = scene["approved"][1]
    old_sha = claim.evidence.get().snapshot.text_sha256
    text = files.pop(f"snapshots/{old_sha}.txt").replace("may lower", "will lower")
    new_sha = sha256_bytes(text.encode())
    for name in ("report/report.json", "evidence.json"):
        files[name] = files[name].replace(old_sha, new_sha)
    files[f"snapshots/{new_sha}.txt"] = text
    manifest = json.loads(files.pop(MANIFEST))
    manifest["files"] = {n: sha256_bytes(t.encode()) for n, t in files.items()}
    files[MANIFEST] = json.dumps(manifest)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    path = tmp_path / "rehashed.zip"
    path.write_bytes(buffer.getvalue())
    problems = verify_bundle(path)
    assert problems
    assert all(str(claim.code) in p for p in problems if "quote" in p)
    assert any(f"claim C2 ({claim.code})" in p and "does not match snapshot" in p for p in problems)


@pytest.mark.django_db
def test_it_fails_verify_bundle_when_a_cited_claim_is_not_approved(report, author, tmp_path):
    data = reports.do_export_report(report, "zip", author).data
    claims = json.loads(zip_text(data)["claims.json"])
    claims["approved"][0]["last_action"] = "reject"
    body = json.dumps(claims)
    files = zip_text(data)
    manifest = json.loads(files[MANIFEST])
    manifest["files"]["claims.json"] = sha256_bytes(body.encode())
    path = tmp_path / "unapproved.zip"
    path.write_bytes(rewrite_zip(data, {"claims.json": body, MANIFEST: json.dumps(manifest)}))
    problems = verify_bundle(path)
    assert problems == [
        f"claim C1 ({claims['approved'][0]['code']}): cited by the report but its latest "
        "decision is not approval"
    ]


@pytest.mark.django_db
def test_it_exports_bibtex_and_csl_json_of_the_cited_sources(report, author):
    bib = reports.do_export_report(report, "bib", author).data.decode()
    assert bib.count("@") == 2
    assert "title = {Aspirin trial}" in bib
    csl = json.loads(reports.do_export_report(report, "csl", author).data)
    assert [item["id"] for item in csl] == ["src1", "src2"]
    assert csl[0]["title"] == "Aspirin trial"
    assert csl[0]["note"] == "url:https://example.org/aspirin-trial"
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
    with pytest.raises(reports.ExportRefused) as refused:
        reports.do_export_report(report, "md", author)
    assert any(str(claim.code) in p and problem in p for p in refused.value.problems), (
        refused.value.problems
    )
