"""Standalone HTML: one file, styles inline, no scripts, evidence autoescaped.

``report_context(doc)`` is what ``templates/reports/report_body.html`` reads; the in-app
report page uses the same context and the same stylesheet (``reports/_report.css``), so
the page, the HTML export and the PDF printed from it show the same report.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from reports.exports import markdown as md
from reports.exports.records import ReportDocument


def report_context(doc: ReportDocument) -> dict[str, Any]:
    return {
        "doc": doc,
        "appendix_titles": md.APPENDIX_TITLES,
        "section_titles": md.SECTION_TITLES,
        "built": md.when(doc.header.created_at),
        "marked": {claim.label for claim in doc.claims if claim.unsupported},
        "unsupported_mark": md.UNSUPPORTED_MARK,
        "overrides_title": md.OVERRIDES_TITLE,
        # Listed under the register until the counter-evidence section lists them.
        "overrides_in_register": [] if doc.answered else [c for c in doc.claims if c.override],
        "evidence_table_note": md.EVIDENCE_TABLE_NOTE,
        "excluded_note": md.EXCLUDED_NOTE,
        "set_aside_title": md.SET_ASIDE_TITLE,
        "set_aside_note": md.SET_ASIDE_NOTE,
        "set_aside": md.set_aside_groups(doc),
        "not_searched": md.NOT_SEARCHED,
        "config": md.run_config_words(doc.appendix_d),
        "answered_subquestions": [line for line in doc.answer.subquestions if line.has_findings],
        "empty_subquestions": [
            line.key for line in doc.answer.subquestions if not line.has_findings
        ],
        "audit": [(row, md.when(row.at), md.audit_action(row)) for row in doc.appendix_c],
    }


def render_html(doc: ReportDocument) -> str:
    return render_to_string("reports/report_export.html", report_context(doc))
