"""Audit any engine's report: take another deep-research engine's report apart.

:func:`parse_report` reads a report (Markdown, HTML, plain text or Perplexity-shaped JSON)
into a :class:`ParsedReport`: its body blocks, its sentences with the sources each cites,
its reference list, and :class:`ParseFinding` rows for citation problems (dangling markers,
references without a link, duplicated or unused references, malformed URLs). Pure: no
database, no network.
"""

from __future__ import annotations

from research.pipeline.audit.parse import parse_report
from research.pipeline.audit.records import (
    FINDING_KINDS,
    MAX_REPORT_CHARS,
    Citation,
    ParsedReport,
    ParseFinding,
    ReportBlock,
    ReportParseError,
    ReportSentence,
)

__all__ = [
    "FINDING_KINDS",
    "MAX_REPORT_CHARS",
    "Citation",
    "ParseFinding",
    "ParsedReport",
    "ReportBlock",
    "ReportParseError",
    "ReportSentence",
    "parse_report",
]
