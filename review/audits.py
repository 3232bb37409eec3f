"""Load an audit run into the audited report's records (``review.audited``).

One reader: the run's imported report (its parse), its claims with their citation
records, the reviewer's decision and, for a re-sourced claim, the other sources that
support it. The audited report is rendered from these records only.
"""

from __future__ import annotations

from dataclasses import replace

from django.db.models import Prefetch

from ledger.models import CitedClaim, DispositionState, EvidenceLink, Relation, ReviewState
from research.models import ImportedReport, Run
from research.pipeline.audit import ParsedReport
from research.pipeline.audit.check import RESOURCED
from research.pipeline.language.sentences import full_stop
from review.audited import AuditedReport, AuditRow


class NotAnAudit(Exception):
    """The run's plan imported no report."""


def audited_report(run: Run) -> AuditedReport:
    imported = ImportedReport.objects.filter(plan_id=run.plan_version.plan_id).first()
    if imported is None:
        raise NotAnAudit("This run's plan is not an audit of an imported report.")
    report = ParsedReport.from_json(imported.parsed)
    supports = EvidenceLink.objects.filter(relation=Relation.SUPPORTS).select_related(
        "passage__source"
    )
    rows = (
        CitedClaim.objects.filter(claim__run=run)
        .exclude(claim__disposition=DispositionState.SUPERSEDED)
        .select_related("claim")
        .prefetch_related("sources", Prefetch("claim__evidence", queryset=supports))
        .order_by("claim__pk")
    )
    out: list[AuditRow] = []
    for number, cited in enumerate(rows, 1):
        claim = cited.claim
        cites = "; ".join(
            f"[{c.get('label', '')}] {c.get('title') or c.get('url') or ''}".strip()
            for c in cited.citations
        )
        cites = "; ".join(
            filter(None, [cites, *(f"{m} (no such reference)" for m in cited.unresolved)])
        )
        reason = cited.reason
        if cited.unreadable and cited.outcome == "unverifiable":
            reason = "; ".join(cited.unreadable)
        if claim.review_state == ReviewState.REJECTED and claim.disposition_reason:
            # The person's judgement first: it decides the mark of a rejected claim.
            said = full_stop(claim.disposition_reason.strip())
            said = said[:1].upper() + said[1:]
            reason = f"{said} Citation check: {reason}" if reason else said
        mark = cited.mark
        own = {s.pk for s in cited.sources.all()}
        others = sorted(
            {
                link.passage.source.title or link.passage.source.url
                for link in claim.evidence.all()
                if link.passage.source_id not in own
            }
        )
        out.append(
            AuditRow(
                number=number,
                text=claim.text,
                sentences=tuple(cited.sentences),
                cites=cites,
                citation=cited.outcome,
                reason=reason,
                quote=cited.quote,
                verdict=claim.status,
                review=claim.review_state,
                mark=mark,
                other_sources="; ".join(others) if mark == RESOURCED else "",
            )
        )
    # A reference without a link that was found in the library by its title was read:
    # the parse's "cannot be fetched" no longer holds for it.
    read = {c.get("label") for cited in rows for c in cited.citations if c.get("read")}
    findings = tuple(
        f for f in report.findings if not (f.kind == "reference-without-link" and f.label in read)
    )
    report = replace(report, findings=findings)
    title = report.title or imported.filename or run.plan_version.plan.question
    return AuditedReport(title=title, run=str(run.code), report=report, rows=tuple(out))


def audit_of(run: Run) -> AuditedReport | None:
    """The run's audited report as it stands; None for a research run."""
    try:
        return audited_report(run)
    except NotAnAudit:
        return None
