"""The audited report: an engine's report as it was written, every sentence marked.

What the audit of an imported report exports (Markdown and HTML): the report's own text,
block by block and sentence by sentence, each sentence followed by its mark —
``confirmed``, ``re-sourced``, ``unsupported``, ``contradicted``, ``unverifiable`` or
``dropped`` (the worst mark of its claims, ``research.pipeline.audit.check``) and the
numbers of its claims — and, as an appendix, the disposition ledger: every claim with
what its sentence cites, the citation check, the run's verdict, the reviewer's decision,
the mark and why. Nothing is left out: a dropped sentence stays, marked dropped. The
report's reference list follows as the report gave it.

Pure: it renders :class:`AuditedReport` records; ``review.audits`` loads them. A report
version of an audit run freezes them (``Report.audited``) and its signed bundle carries
both renderings (``audited/report.md``, ``audited/report.html``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from research.pipeline.audit.check import MARK_WORDS, MARKS, sentence_mark
from research.pipeline.audit.records import Citation, ParsedReport


@dataclass(frozen=True)
class AuditRow:
    """One claim of the audit, as its disposition ledger shows it."""

    number: int
    text: str
    sentences: tuple[int, ...]
    cites: str  # what its sentence cites, as the report wrote it ("" when nothing)
    citation: str  # the citation check's outcome
    reason: str  # why (the check's rationale, or why the source could not be read)
    quote: str  # the cited source's words that decided ("" without)
    verdict: str  # the run's verdict over all the evidence
    review: str  # the reviewer's decision (unreviewed, approved, narrowed, rejected)
    mark: str
    other_sources: str = ""  # a re-sourced claim's supporting sources


@dataclass(frozen=True)
class AuditedReport:
    title: str
    run: str  # the run's code
    report: ParsedReport
    rows: tuple[AuditRow, ...]

    def marks(self) -> dict[int, tuple[str, tuple[int, ...]]]:
        """Per sentence index: its mark and the numbers of its claims."""
        found: dict[int, list[AuditRow]] = {}
        for row in self.rows:
            for index in row.sentences:
                found.setdefault(index, []).append(row)
        return {
            index: (sentence_mark([r.mark for r in rows]), tuple(r.number for r in rows))
            for index, rows in found.items()
        }

    def to_json(self) -> dict[str, Any]:
        """What a report version freezes (``Report.audited``)."""
        return {
            "title": self.title,
            "run": self.run,
            "report": self.report.to_json(),
            "rows": [asdict(row) for row in self.rows],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditedReport:
        rows = tuple(
            AuditRow(**{**row, "sentences": tuple(row["sentences"])}) for row in data["rows"]
        )
        return cls(
            title=str(data["title"]),
            run=str(data["run"]),
            report=ParsedReport.from_json(data["report"]),
            rows=rows,
        )

    def counts(self) -> dict[str, int]:
        marks = [mark for mark, _ in self.marks().values()]
        return {mark: marks.count(mark) for mark in MARKS if mark in marks}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _reference(citation: Citation) -> str:
    where = citation.url or (f"doi:{citation.doi}" if citation.doi else "")
    where = where or (f"arXiv:{citation.arxiv_id}" if citation.arxiv_id else "")
    return " — ".join(part for part in (citation.title, where) if part) or "(nothing to follow)"


def render_markdown(audit: AuditedReport) -> str:
    """The audited report in Markdown (module docstring)."""
    marks = audit.marks()
    counts = audit.counts()
    lines = [
        f"# Audited: {audit.title}",
        "",
        f"Run {audit.run}. Every sentence of the report as it was written, followed by its "
        "mark in brackets and the numbers of its claims in the disposition ledger "
        "(Appendix A).",
        "",
        "Sentences: " + ", ".join(f"{n} {mark}" for mark, n in counts.items()) + ".",
        "",
    ]
    for block in audit.report.blocks:
        if block.kind == "heading":
            lines += [f"{'#' * min(max(block.level, 1) + 1, 6)} {block.text}", ""]
            continue
        parts = []
        for index in block.sentences:
            raw = " ".join(audit.report.sentences[index].raw.split())
            mark, numbers = marks.get(index, ("", ()))
            tag = f"{mark}: " + ", ".join(f"C{n}" for n in numbers) if mark else "not a claim"
            parts.append(f"{raw} **[{tag}]**")
        prefix = "- " if block.kind == "list-item" else "> " if block.kind == "quote" else ""
        lines += [prefix + " ".join(parts), ""]
    if audit.report.references:
        lines += ["## The report's references", ""]
        lines += [f"- [{c.label}] {_reference(c)}" for c in audit.report.references]
        lines.append("")
    lines += _ledger_markdown(audit.rows)
    if audit.report.findings:
        lines += ["## Appendix B. Problems in the report's citations", ""]
        lines += [f"- {f.kind}: {f.detail}" for f in audit.report.findings]
        lines.append("")
    return "\n".join(lines)


def _why(row: AuditRow, escape: Callable[[str], str], quoted: str) -> str:
    """The ledger's "Why": the check's reason, the cited words and, when re-sourced, the
    other sources; ``escape`` each text, ``quoted`` the cited words' frame."""
    parts = [escape(row.reason)] if row.reason.strip() else []
    if row.quote:
        parts.append("The cited source says: " + quoted.format(escape(row.quote)))
    if row.other_sources:
        parts.append(f"Supported instead by: {escape(row.other_sources)}")
    return " ".join(_full_stop(part) for part in parts)


def _full_stop(text: str) -> str:
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", '"', "</q>", "\u201d")) else text + "."


def _ledger_markdown(rows: Sequence[AuditRow]) -> list[str]:
    lines = [
        "## Appendix A. Disposition ledger",
        "",
        "| # | Claim | Cites | Citation check | Verdict | Review | Mark | Why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        why = _why(row, lambda text: text, '"{}"')
        lines.append(
            f"| C{row.number} | {_cell(row.text)} | {_cell(row.cites) or 'nothing'} | "
            f"{row.citation} | {row.verdict} | {row.review} | **{row.mark}** | {_cell(why)} |"
        )
    lines += ["", "Marks: " + "; ".join(f"{m}: {w}" for m, w in MARK_WORDS.items()) + ".", ""]
    return lines


def render_html(audit: AuditedReport) -> str:
    """The audited report as one HTML page (every text escaped)."""
    e = html.escape
    marks = audit.marks()
    body = [
        f"<h1>Audited: {e(audit.title)}</h1>",
        f"<p class='meta'>Run {e(audit.run)}. Sentences: "
        + ", ".join(f"{n} {e(mark)}" for mark, n in audit.counts().items())
        + ".</p>",
    ]
    for block in audit.report.blocks:
        if block.kind == "heading":
            level = min(max(block.level, 1) + 1, 6)
            body.append(f"<h{level}>{e(block.text)}</h{level}>")
            continue
        spans = []
        for index in block.sentences:
            raw = " ".join(audit.report.sentences[index].raw.split())
            mark, numbers = marks.get(index, ("", ()))
            claims = ", ".join(f"C{n}" for n in numbers)
            css = f"mark-{mark.replace(' ', '-')}" if mark else "mark-none"
            label = f"{mark}: {claims}" if mark else "not a claim"
            spans.append(
                f"<span class='sentence {e(css)}' title='{e(MARK_WORDS.get(mark, ''))}'>"
                f"{e(raw)} <strong class='mark'>[{e(label)}]</strong></span>"
            )
        tag = "li" if block.kind == "list-item" else "blockquote" if block.kind == "quote" else "p"
        body.append(f"<{tag}>{' '.join(spans)}</{tag}>")
    if audit.report.references:
        body.append("<h2>The report's references</h2><ul>")
        body += [f"<li>[{e(c.label)}] {e(_reference(c))}</li>" for c in audit.report.references]
        body.append("</ul>")
    body.append("<h2>Appendix A. Disposition ledger</h2><table><thead><tr>")
    body.append(
        "".join(
            f"<th>{h}</th>"
            for h in ("#", "Claim", "Cites", "Citation check", "Verdict", "Review", "Mark", "Why")
        )
    )
    body.append("</tr></thead><tbody>")
    for row in audit.rows:
        why = _why(row, e, "<q>{}</q>")
        body.append(
            f"<tr><td>C{row.number}</td><td>{e(row.text)}</td><td>{e(row.cites) or 'nothing'}"
            f"</td><td>{e(row.citation)}</td><td>{e(row.verdict)}</td><td>{e(row.review)}</td>"
            f"<td><strong>{e(row.mark)}</strong></td><td>{why}</td></tr>"
        )
    body.append("</tbody></table>")
    if audit.report.findings:
        body.append("<h2>Appendix B. Problems in the report's citations</h2><ul>")
        body += [f"<li>{e(f.kind)}: {e(f.detail)}</li>" for f in audit.report.findings]
        body.append("</ul>")
    style = (
        "body{font-family:sans-serif;max-width:60rem;margin:2rem auto;line-height:1.5}"
        ".mark-contradicted .mark,.mark-unsupported .mark,.mark-unverifiable .mark,"
        ".mark-dropped .mark{color:#a40000}.mark-confirmed .mark,.mark-re-sourced .mark"
        "{color:#1a6a1a}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
        "padding:.3rem;vertical-align:top}"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Audited: {e(audit.title)}</title><style>{style}</style></head><body>"
        + "\n".join(body)
        + "</body></html>\n"
    )
