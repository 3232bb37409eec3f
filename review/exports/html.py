"""Standalone HTML: one file, styles inline, no scripts, evidence autoescaped."""

from __future__ import annotations

from django.template.loader import render_to_string

from review.exports.markdown import APPENDIX_TITLES
from review.exports.records import ReportDocument


def render_html(doc: ReportDocument) -> str:
    return render_to_string(
        "review/report_export.html", {"doc": doc, "appendix_titles": APPENDIX_TITLES}
    )
