"""Markdown rendering of a report document (also the report's canonical text and hash)."""

from __future__ import annotations

import json
import re
from typing import Any

from review.exports.records import ReportDocument, SectionRow, SentenceRow

# Characters with a meaning in CommonMark/GFM inline syntax; escaped in evidence text so
# hostile quotes cannot inject links, HTML, tables or emphasis.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~&])")

APPENDIX_TITLES = {
    "a": "Appendix A — Excluded, failed and uncertain claims",
    "b": "Appendix B — Evidence table",
    "c": "Appendix C — Review audit log",
    "d": "Appendix D — Plan, method and configuration",
    "e": "Appendix E — Changes since the previous run",
}


SET_ASIDE_TITLE = "Set aside at mining"
SET_ASIDE_NOTE = (
    "Candidate propositions the claim miner dropped before verification (a question, a "
    "statement of aim or method, too short, over the claim budget, a source sentence "
    "that no longer matches its snapshot), with the reason. Their wording is withheld "
    "too; the offsets locate the source sentence in the snapshot."
)


def md_escape(text: Any) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def cell(text: Any) -> str:
    return md_escape(text) or "—"


def sentence_md(sentence: SentenceRow) -> str:
    marks = "".join(f"[{n}]" for n in sentence.citations)
    return f"{md_escape(sentence.text)} {marks} ({', '.join(sentence.claims)})"


def render_markdown(doc: ReportDocument) -> str:
    parts = [
        _header(doc),
        *(_section(n, s) for n, s in enumerate(doc.sections, 1)),
        _claims(doc),
        _references(doc),
        _appendix_a(doc),
        _appendix_b(doc),
        _appendix_c(doc),
        _appendix_d(doc),
        _appendix_e(doc),
        _check(doc),
    ]
    return "\n\n".join(p.strip() for p in parts) + "\n"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    if not rows:
        return "_None._"
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _header(doc: ReportDocument) -> str:
    h = doc.header
    meta = (
        f"Report version {h.report_version} · plan version {h.plan_version} "
        f"(`{h.plan_version_hash[:12]}`) · run `{h.run_code}` · "
        f"synthesizer: {md_escape(h.synthesizer)} · built {h.created_at} "
        f"by {md_escape(h.created_by)}"
    )
    method = "\n".join(f"- {md_escape(line)}" for line in doc.appendix_d.method)
    return f"# {md_escape(h.title)}\n\n{meta}\n\n## Method\n\n{method}"


def _section(number: int, section: SectionRow) -> str:
    prose = " ".join(sentence_md(s) for s in section.sentences)
    return f"## {number}. {md_escape(section.title)}\n\n{prose}"


def _claims(doc: ReportDocument) -> str:
    rows = [
        [
            c.label,
            c.text,
            c.allowed_scope,
            c.limitations,
            "" if c.confidence is None else f"{c.confidence:.2f}",
            ", ".join(c.evidence),
        ]
        for c in doc.claims
    ]
    headers = ["Claim", "Approved text", "Allowed scope", "Limitations", "Confidence", "Evidence"]
    text = "## Claim register\n\n" + _table(headers, rows)
    overrides = [c for c in doc.claims if c.override]
    if overrides:
        lines = ["", "Reviewer overrides (approved against the verifiers' verdict):", ""]
        for c in overrides:
            lines.append(f"- {c.label}: {md_escape(c.override)}")
            lines.extend(f"  - Contrary evidence: “{md_escape(q)}”" for q in c.contrary)
        text += "\n".join(lines) + "\n"
    return text


def _references(doc: ReportDocument) -> str:
    lines = []
    for entry in doc.bibliography:
        hashes = ", ".join(f"`{s.sha256}`" for s in entry.snapshots)
        lines.append(
            f"{entry.number}. \\[{entry.number}\\] {md_escape(entry.reference)} "
            f"Snapshot sha256: {hashes}"
        )
    return "## References\n\n" + "\n".join(lines)


def _appendix_a(doc: ReportDocument) -> str:
    note = (
        "Claims that are not in the report, with the reasons. Their text is withheld "
        "on purpose: only approved claims are ever printed."
    )
    rows = [
        [
            x.label,
            x.code,
            x.subquestion,
            x.status,
            x.review_state,
            x.disposition,
            "; ".join(x.reasons),
        ]
        for x in doc.appendix_a
    ]
    headers = ["Label", "Claim code", "Subquestion", "Verdict", "Review", "Disposition", "Reasons"]
    return (
        f"## {APPENDIX_TITLES['a']}\n\n{note}\n\n"
        + _table(headers, rows)
        + "\n\n"
        + _set_aside(doc)
    )


def _set_aside(doc: ReportDocument) -> str:
    rows = [
        [
            m.label,
            m.subquestion,
            m.claim_type,
            m.reason,
            m.canonical_id,
            m.snapshot_sha256,
            "" if m.quote_start is None else f"{m.quote_start}–{m.quote_end}",
        ]
        for m in doc.appendix_a_set_aside
    ]
    headers = ["Label", "Subquestion", "Type", "Reason", "Source", "Snapshot sha256", "Offsets"]
    return f"### {SET_ASIDE_TITLE}\n\n{SET_ASIDE_NOTE}\n\n" + _table(headers, rows)


def _appendix_b(doc: ReportDocument) -> str:
    rows = [
        [
            e.label,
            e.claim,
            e.quote,
            f"[{e.source}] {e.canonical_id}",
            e.published_date or e.fetched_at[:10],
            e.snapshot_sha256,
            f"{e.quote_start}–{e.quote_end}",
        ]
        for e in doc.appendix_b
    ]
    headers = ["Evidence", "Claim", "Quote", "Source", "Date", "Snapshot sha256", "Offsets"]
    return f"## {APPENDIX_TITLES['b']}\n\n" + _table(headers, rows)


def _appendix_c(doc: ReportDocument) -> str:
    rows = [
        [
            d.at,
            d.reviewer,
            d.action
            + (" (text narrowed)" if d.text_changed else "")
            + (f" (override of {d.override})" if d.override else "")
            + (f" (carried over from decision {d.carried_from})" if d.carried_from else ""),
            d.claim,
            d.reason_code,
            d.reason,
        ]
        for d in doc.appendix_c
    ]
    headers = ["When", "Reviewer", "Action", "Claim", "Reason code", "Reason"]
    return f"## {APPENDIX_TITLES['c']}\n\n" + _table(headers, rows)


def _appendix_d(doc: ReportDocument) -> str:
    d = doc.appendix_d
    lines = [
        f"- Question: {md_escape(d.question)}",
        f"- Scope: {md_escape(d.scope) or '—'}",
        f"- Plan version {d.plan_version}, sha256 `{d.plan_version_hash}`",
        f"- Run `{d.run_code}` ({d.run_state}), configuration sha256 `{d.run_config_hash}`",
    ]
    for sub in d.subquestions:
        lines.append(f"- Subquestion {md_escape(sub.key)}: {md_escape(sub.text)}")
        for query in sub.queries:
            lines.append(f"  - \\[{md_escape(query.query_class)}\\] {md_escape(query.text)}")
    for stage in d.stages:
        notes = "; ".join(f"{k}: {v}" for k, v in stage.notes.items())
        lines.append(f"- Stage {stage.stage}: {stage.status} {md_escape(notes)}".rstrip())
    config = json.dumps(d.run_config, indent=2, sort_keys=True, ensure_ascii=False)
    fence = "`" * max(3, _longest_backtick_run(config) + 1)
    return (
        f"## {APPENDIX_TITLES['d']}\n\n"
        + "\n".join(lines)
        + f"\n\nRun configuration:\n\n{fence}json\n{config}\n{fence}"
    )


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _appendix_e(doc: ReportDocument) -> str:
    e = doc.appendix_e
    if not e.against_run:
        return f"## {APPENDIX_TITLES['e']}\n\nNo previous run of this plan."
    summary = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in e.summary.items())
    entries = "\n".join(f"- {md_escape(line)}" for line in e.entries) or "_No changes._"
    return (
        f"## {APPENDIX_TITLES['e']}\n\nCompared with run `{e.against_run}` — "
        f"{summary}.\n\n{entries}"
    )


def _check(doc: ReportDocument) -> str:
    findings = doc.check.findings
    if not findings:
        body = "No sentence was removed; every sentence maps to approved claims."
    else:
        body = "\n".join(
            f"- {md_escape(f.section)}: {f.action} — {md_escape(f.reason)}" for f in findings
        )
    synthesizer = md_escape(doc.check.synthesizer)
    return f"## Post-synthesis check\n\nSynthesizer: {synthesizer}.\n\n{body}"
