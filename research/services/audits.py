"""Audit plans: a report another engine wrote, imported to have every claim it makes checked.

:func:`check_import_report` parses the report (``research.pipeline.audit.parse_report``)
and saves, in one transaction, an audit plan (``Plan.kind = "audit"``), its first
version and the imported report (its text exactly as given and its parse). A report that
cannot be read raises :class:`~research.services.plans.PlanInvalid` with the reason in
words and saves nothing; citations that cannot be resolved are not errors: they are
findings of the audit, shown in its ledger.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction

from ledger.models import Library
from ledger.services.library import library_choices_for_plan
from research.models import ImportedReport, Plan, PlanKind, PlanVersion
from research.pipeline.audit import ParsedReport, ReportParseError, parse_report
from research.pipeline.records import (
    MAX_QUESTION_CHARS,
    Budgets,
    PlanContent,
    SubquestionSpec,
)
from research.roles import can_edit_plans
from research.services.plans import PlanInvalid

AUDIT_SUBQUESTION = "What the report claims, each claim checked against the source it cites"
FORMATS = ("auto", "markdown", "html", "text", "json")


def audit_question(report: ParsedReport, filename: str = "") -> str:
    """The plan's question: "Audit: <the report's title>" (its file name, else its start)."""
    first = report.sentences[0].text if report.sentences else ""
    name = report.title or filename or first or "an imported report"
    question = f"Audit: {' '.join(name.split())}"
    return (
        question
        if len(question) <= MAX_QUESTION_CHARS
        else question[: MAX_QUESTION_CHARS - 1] + "…"
    )


def audit_content(report: ParsedReport, filename: str = "") -> PlanContent:
    """Version 1 of an audit plan: one subquestion, no queries (a researcher may add
    counter-evidence queries); room in the documents budget for every cited document."""
    cited = {c.label for s in report.sentences for c in s.citations}
    budgets = Budgets()
    budgets.documents = max(budgets.documents, len(cited) + 50)
    return PlanContent(
        kind="audit",
        question=audit_question(report, filename),
        planner="audit import",
        planner_message=f"imported a {report.format} report with {len(report.sentences)} "
        f"sentences citing {len(cited)} sources",
        budgets=budgets,
        subquestions=[SubquestionSpec(key="sq1", text=AUDIT_SUBQUESTION, budget=6)],
    )


def check_import_report(
    user: User,
    data: str | bytes,
    *,
    format: str = "auto",
    filename: str = "",
    library: Library | None = None,
    scope: str = "",
) -> Plan:
    """Parse the report and save the audit plan, or raise PlanInvalid (nothing saved)."""
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may import reports.")
    if format not in FORMATS:
        raise PlanInvalid([f"Unknown format {format!r}: choose one of {', '.join(FORMATS)}."])
    if library is not None and not library_choices_for_plan(user).filter(pk=library.pk).exists():
        raise PlanInvalid(["You may not search that library: it has not been shared with you."])
    try:
        report = parse_report(data, format, filename=filename)
    except ReportParseError as exc:
        raise PlanInvalid([str(exc)]) from exc
    if not report.sentences:
        raise PlanInvalid(["The report has no sentences to check: is this the report's text?"])
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    content = audit_content(report, filename)
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=user,
            kind=PlanKind.AUDIT,
            question=content.question,
            scope=scope,
            library=library,
        )
        PlanVersion.create_next(plan, content.dump(), user, note="imported for audit")
        ImportedReport.objects.create(
            plan=plan,
            filename=filename[:255],
            format=report.format,
            text=text,
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            parsed=report.to_json(),
            imported_by=user,
        )
    return plan


def imported_summary(plan: Plan) -> dict[str, object] | None:
    """An audit plan's imported report in brief (plan and ledger pages); None otherwise."""
    imported = ImportedReport.objects.filter(plan=plan).first()
    if imported is None:
        return None
    report = ParsedReport.from_json(imported.parsed)
    return {
        "filename": imported.filename,
        "format": imported.format,
        "imported_at": imported.imported_at,
        "sentences": len(report.sentences),
        "cited": sum(1 for s in report.sentences if s.citations or s.unresolved),
        "references": len(report.references),
        "findings": report.findings,
    }
