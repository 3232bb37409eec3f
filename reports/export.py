"""Exporting a report version in every format, refused when it fails a check.

``render_checked(report, fmt)`` / ``do_export_report(report, fmt, user)``: refused
(``ExportRefused``) on any integrity problem (``reports.integrity.integrity_problems``),
or if any variant of a withheld text (an excluded claim's, or a candidate's that mining
set aside) would appear in the output. The formats themselves render in
``reports.exports``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import Http404

from ledger.models import Snapshot
from reports.exports import bundle, citations
from reports.exports.document import leak_matcher
from reports.exports.html import render_html
from reports.exports.pdf import render_pdf
from reports.exports.records import ReportDocument
from reports.inputs import withheld_texts
from reports.integrity import integrity_problems, report_document, searchable
from reports.models import Export, Report
from reports.signing import instance_private_key
from review.audited import AuditedReport
from review.audited import render_html as render_audited_html
from review.audited import render_markdown as render_audited_markdown

FORMATS: dict[str, tuple[str, str]] = {
    "md": ("text/markdown; charset=utf-8", "md"),
    "html": ("text/html; charset=utf-8", "html"),
    "pdf": ("application/pdf", "pdf"),
    "zip": ("application/zip", "zip"),
    "bib": ("application/x-bibtex; charset=utf-8", "bib"),
    "csl": ("application/vnd.citationstyles.csl+json; charset=utf-8", "csl.json"),
}


class ExportRefused(Exception):
    """The evidence no longer matches what the report was built on."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("export refused: " + "; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ExportFile:
    fmt: str
    filename: str
    content_type: str
    data: bytes


# --- exporting --------------------------------------------------------------------------


class ExportBusy(Exception):
    """The user already has as many PDF exports printing as they may; nothing was exported."""


# Postgres advisory-lock keys of the per-user PDF slots: (this + slot number, user id).
PDF_LOCK_NAMESPACE = 0x45425044  # "EBPD"


def do_export_report(report: Report, fmt: str, user: Any) -> ExportFile:
    """Render one format after re-checking integrity and scanning it; record the export.

    A PDF holds one of its user's printing slots while it prints (``ExportBusy`` when
    none is free), so one user cannot take every page of the printer.
    """
    with _printing_slot(fmt, user):
        export = render_checked(report, fmt)
    Export.objects.create(
        report=report,
        format=fmt,
        content_hash=hashlib.sha256(export.data).hexdigest(),
        size=len(export.data),
        created_by=user,
    )
    return export


@contextmanager
def _printing_slot(fmt: str, user: Any) -> Iterator[None]:
    """One of the user's ``PDF_MAX_PER_USER`` PDF slots for the block, or ``ExportBusy``.

    The slots are Postgres advisory locks: they count across every web process and the
    command line, and a process that dies releases them with its connection.
    """
    if fmt != "pdf" or user is None or user.pk is None:
        yield
        return
    limit = settings.PDF_MAX_PER_USER
    key = _try_pdf_lock(limit, user.pk)
    if key is None:
        exports = "a PDF export" if limit == 1 else f"{limit} PDF exports"
        raise ExportBusy(
            f"You already have {exports} printing: wait until it is downloaded, then export again"
        )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s::int4, %s::int4)", key)


def _try_pdf_lock(limit: int, user_pk: int) -> tuple[int, int] | None:
    with connection.cursor() as cursor:
        for slot in range(limit):
            key = (PDF_LOCK_NAMESPACE + slot, user_pk)
            cursor.execute("SELECT pg_try_advisory_lock(%s::int4, %s::int4)", key)
            if cursor.fetchone()[0]:
                return key
    return None


def render_checked(report: Report, fmt: str) -> ExportFile:
    """One format's bytes, refused on any integrity problem or withheld-text leak."""
    if fmt not in FORMATS:
        raise Http404("No such export format")
    problems = integrity_problems(report)
    if problems:
        raise ExportRefused(problems)
    document = report_document(report)
    data = render_format(report, document, fmt)
    matcher = leak_matcher(document, withheld_texts(report.run, set(report.claim_codes)))
    for where, text in searchable(document, fmt, data):
        if matcher.first_leak(text) is not None:
            raise ExportRefused(
                [
                    f"the text of an excluded claim or candidate would appear in the {fmt} "
                    f"export ({where})"
                ]
            )
    content_type, ext = FORMATS[fmt]
    filename = f"report-{report.run.code}-v{report.version}.{ext}"
    return ExportFile(fmt=fmt, filename=filename, content_type=content_type, data=data)


def render_format(report: Report, document: ReportDocument, fmt: str) -> bytes:
    if fmt == "md":
        return report.markdown.encode()
    if fmt == "html":
        return render_html(document).encode()
    if fmt == "pdf":
        return render_pdf(render_html(document), dated=report.created_at)
    if fmt == "bib":
        return citations.bibtex(document.bibliography).encode()
    if fmt == "csl":
        return citations.csl_json(document.bibliography).encode()
    return _bundle(report, document)


# --- the bundle -------------------------------------------------------------------------


def _bundle(report: Report, document: ReportDocument) -> bytes:
    run = report.run
    plan_version = run.plan_version
    files = {
        "report/report.md": report.markdown.encode(),
        "report/report.html": render_html(document).encode(),
        "report/report.json": bundle.to_json(document.to_json()),
        "plan_version.json": bundle.to_json(
            {
                "plan_code": str(plan_version.plan.code),
                "question": plan_version.plan.question,
                "number": plan_version.number,
                "content": plan_version.content,
                "content_hash": plan_version.content_hash,
            }
        ),
        "run.json": bundle.to_json(
            {
                "code": str(run.code),
                "config": run.config,
                "config_hash": run.config_hash,
                "budgets": run.budgets,
                "stages": [s.model_dump(mode="json") for s in document.appendix_d.stages],
            }
        ),
        "claims.json": bundle.to_json(bundle.bundle_claims(document).model_dump(mode="json")),
        "evidence.json": bundle.to_json([r.model_dump(mode="json") for r in document.appendix_b]),
        "decisions.json": bundle.to_json([r.model_dump(mode="json") for r in document.appendix_c]),
        "sources.bib": citations.bibtex(document.bibliography).encode(),
        "sources.csl.json": citations.csl_json(document.bibliography).encode(),
    }
    if report.audited:  # an audit run: the imported report, every sentence marked
        audited = AuditedReport.from_json(report.audited)
        files["audited/report.md"] = render_audited_markdown(audited).encode()
        files["audited/report.html"] = render_audited_html(audited).encode()
    return bundle.build_bundle(
        files=files,
        snapshots=_bundle_snapshots(document),
        report={
            "code": str(report.code),
            "version": report.version,
            "title": document.header.title,
            "content_hash": report.content_hash,
            "synthesizer": report.synthesizer,
        },
        key=instance_private_key(),
    )


def _bundle_snapshots(document: ReportDocument) -> list[dict[str, Any]]:
    codes = sorted({row.snapshot_code for row in document.appendix_b})
    rows = Snapshot.objects.filter(code__in=codes).select_related("source").order_by("code")
    return [
        {
            "code": str(s.code),
            "canonical_id": s.source.canonical_id,
            "text_sha256": s.text_sha256,
            "raw_sha256": s.raw_sha256,
            "fetched_at": s.fetched_at.isoformat(),
            "content_type": s.content_type,
            "extractor": s.extractor,
            "text": s.text,
        }
        for s in rows
    ]
