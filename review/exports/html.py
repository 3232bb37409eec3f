"""Standalone HTML: one file, styles inline, no scripts, evidence autoescaped."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from review.exports.markdown import APPENDIX_TITLES


def render_html(doc: dict[str, Any]) -> str:
    return render_to_string(
        "review/report_export.html", {"doc": doc, "appendix_titles": APPENDIX_TITLES}
    )
