"""Markdown rendering of a report document (also the report's canonical text and hash).

The order is the reader's: the bottom line first, then the evidence table, the findings
by subquestion, counter-evidence and disagreement, gaps, the method, the claim register
and the references; the appendices follow, compact (short hash prefixes: the full values
are in the bundle's report.json, evidence.json and manifest).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from reports.exports.records import (
    AnswerSentenceRow,
    AuditRow,
    ClaimRow,
    PlanAppendix,
    ReportDocument,
    SectionRow,
    SentenceRow,
    StageRow,
)

# Characters with a meaning in CommonMark/GFM inline syntax; escaped in evidence text so
# hostile quotes cannot inject links, HTML, tables or emphasis.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~&])")

# Hash prefixes printed in the report; the full values are in the bundle.
HASH_CHARS = 12

APPENDIX_TITLES = {
    "a": "Appendix A — Excluded, failed and uncertain claims",
    "b": "Appendix B — Quotes behind the claims",
    "c": "Appendix C — Review audit log",
    "d": "Appendix D — Plan, method and configuration",
    "e": "Appendix E — Changes since the previous run",
}
SECTION_TITLES = {
    "bottom_line": "Bottom line",
    "evidence_table": "Evidence table",
    "findings": "Findings by subquestion",
    "counter": "Counter-evidence and disagreement",
    "gaps": "Gaps",
    "method": "Method",
    "claims": "Claim register",
    "references": "References",
}
EVIDENCE_TABLE_NOTE = (
    "One row per cited source. Design and year are as the source's text and metadata "
    "state them, population as a study of people states it, else as its approved claims "
    "name it; intervention or exposure, outcome, direction and effect as its approved "
    "claims state them (a phrase the wording does not make clear is left out: "
    "the claim register has every claim in full). A dash or “unknown” means not stated: "
    "nothing is inferred."
)
UNSUPPORTED_MARK = "approved without verified support"
OVERRIDES_TITLE = "Reviewer overrides (approved against the verifiers' verdict)"
NOT_SEARCHED = "disabled in the plan: not searched"

SET_ASIDE_TITLE = "Set aside at mining"
SET_ASIDE_NOTE = (
    "Candidate propositions the claim miner dropped before verification, counted by "
    "reason. Their wording is withheld; each one's source and offsets are in the bundle "
    "(claims.json) and on the run's candidates page."
)
EXCLUDED_NOTE = (
    "Claims that are not in the report, with the reasons. Their text is withheld on "
    "purpose: only approved claims are ever printed."
)


def md_escape(text: Any) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def cell(text: Any) -> str:
    return md_escape(text) or "—"


def short(value: str) -> str:
    return value[:HASH_CHARS]


def when(iso: str) -> str:
    """An ISO timestamp as ``YYYY-MM-DD HH:MM UTC`` (as stored when it is not ISO)."""
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return iso


def cite(numbers: list[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


def sentence_md(
    sentence: SentenceRow | AnswerSentenceRow, marked: frozenset[str] | set[str] = frozenset()
) -> str:
    labels = [
        f"{label} — {UNSUPPORTED_MARK}" if label in marked else label for label in sentence.claims
    ]
    tail = f" ({', '.join(labels)})" if labels else ""
    marks = f" {cite(sentence.citations)}" if sentence.citations else ""
    return f"{md_escape(sentence.text)}{marks}{tail}"


def render_markdown(doc: ReportDocument) -> str:
    marked = {c.label for c in doc.claims if c.unsupported}
    parts = [
        _header(doc),
        _bottom_line(doc, marked),
        _evidence_table(doc),
        _findings(doc, marked),
        _counter(doc),
        _gaps(doc),
        _method(doc),
        _claims(doc),
        _references(doc),
        _appendix_a(doc),
        _appendix_b(doc),
        _appendix_c(doc),
        _appendix_d(doc),
        _appendix_e(doc),
        _check(doc),
    ]
    return "\n\n".join(p.strip() for p in parts if p.strip()) + "\n"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    if not rows:
        return "_None._"
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _header(doc: ReportDocument) -> str:
    h = doc.header
    meta = (
        f"Report version {h.report_version} · built {when(h.created_at)} by "
        f"{md_escape(h.created_by) or '—'} · plan version {h.plan_version} "
        f"(`{short(h.plan_version_hash)}`) · run `{h.run_code[:8]}` · "
        f"synthesizer: {md_escape(h.synthesizer)}"
    )
    return f"# {md_escape(h.title)}\n\n{meta}"


# --- the answer ------------------------------------------------------------------------


def _bottom_line(doc: ReportDocument, marked: set[str]) -> str:
    answer = doc.answer
    if answer.question is None:
        return ""
    q = answer.question
    prose = " ".join(sentence_md(s, marked) for s in q.sentences)
    parts = [
        f"## {SECTION_TITLES['bottom_line']}",
        f"**Consensus: {q.consensus_label.upper()}.** {prose}",
    ]
    rows = [
        [
            f"{line.key}. {line.title}",
            line.consensus_label,
            " ".join(sentence_md(s, marked) for s in line.sentences),
        ]
        for line in answer.subquestions
        if line.has_findings
    ]
    if rows:
        parts.append(_table(["Subquestion", "Consensus", "What the approved evidence says"], rows))
    empty = [line.key for line in answer.subquestions if not line.has_findings]
    if empty:
        parts.append(f"No approved finding for {', '.join(empty)}: see {SECTION_TITLES['gaps']}.")
    parts.append(
        "_How consensus is rated: see Method. Every number above counts approved claims "
        "or the sources behind them (listed in brackets)._"
    )
    return "\n\n".join(parts)


def _evidence_table(doc: ReportDocument) -> str:
    if not doc.evidence_table:
        return ""
    rows = [
        [
            f"[{s.number}]",
            s.title,
            s.year or "unknown",
            s.design or "not stated",
            s.population or "—",
            s.intervention or "—",
            s.outcome or "—",
            s.direction or "—",
            ", ".join(s.claims),
        ]
        for s in doc.evidence_table
    ]
    headers = [
        "Ref",
        "Source",
        "Year",
        "Design",
        "Population",
        "Intervention / exposure",
        "Outcome",
        "Finding: direction, effect",
        "Claims",
    ]
    return f"## {SECTION_TITLES['evidence_table']}\n\n{EVIDENCE_TABLE_NOTE}\n\n" + _table(
        headers, rows
    )


def _findings(doc: ReportDocument, marked: set[str]) -> str:
    sections = "\n\n".join(_section(n, s, marked) for n, s in enumerate(doc.sections, 1))
    return f"## {SECTION_TITLES['findings']}\n\n{sections}"


def _section(number: int, section: SectionRow, marked: set[str]) -> str:
    prose = " ".join(sentence_md(s, marked) for s in section.sentences)
    # Numbered by subquestion key, as in the bottom line and the gaps ("s7"), not position.
    return f"### {section.key or number}. {md_escape(section.title)}\n\n{prose}"


def _counter(doc: ReportDocument) -> str:
    if not doc.answered:
        return ""
    c = doc.counter
    parts = [f"## {SECTION_TITLES['counter']}"]
    if c.contested:
        lines = []
        for pair in c.contested:
            second = (
                f"**{pair.second}** “{md_escape(pair.second_text)}”"
                if pair.second_text
                else f"**{pair.second}** (not in this report: {md_escape(pair.second_state)})"
            )
            lines.append(
                f"- **{pair.first}** “{md_escape(pair.first_text)}” ⟷ {second} — "
                f"{md_escape(pair.reason)}"
            )
        parts.append("### Contested findings\n\n" + "\n".join(lines))
    if c.contradictions:
        rows = [
            [x.claim, f"“{x.quote}”", x.source, x.strength or x.relation] for x in c.contradictions
        ]
        table = _table(["Claim", "Contradicting quote", "Source", "Judged"], rows)
        parts.append("### Contradicting evidence\n\n" + table)
    if c.overrides:
        lines = []
        for o in c.overrides:
            lines.append(
                f"- {o.claim}: {md_escape(o.verdict)} overridden by {md_escape(o.reviewer)} — "
                f"“{md_escape(o.reason)}”"
            )
            lines += [f"  - Contrary evidence: “{md_escape(q)}”" for q in o.contrary]
        parts.append(f"### {OVERRIDES_TITLE}\n\n" + "\n".join(lines))
    if len(parts) == 1:
        parts.append(
            "No reported claim is contested by another claim of the run, no verifier found "
            "a contradicting quote for one, and no reviewer overrode a verdict."
        )
    return "\n\n".join(parts)


def _gaps(doc: ReportDocument) -> str:
    if not doc.answered:
        return ""
    if not doc.gaps:
        return (
            f"## {SECTION_TITLES['gaps']}\n\nEvery subquestion of the plan has approved evidence."
        )
    rows = [
        [
            f"{g.key}. {g.title}",
            g.state,
            "; ".join(g.searched) or "nothing",
            g.found,
            g.would_answer,
        ]
        for g in doc.gaps
    ]
    headers = ["Subquestion", "Why it is a gap", "Searched", "Found", "What would answer it"]
    note = f"\n\n{md_escape(doc.gaps_note)}" if doc.gaps_note else ""
    return f"## {SECTION_TITLES['gaps']}\n\n" + _table(headers, rows) + note


def _method(doc: ReportDocument) -> str:
    lines = [*doc.appendix_d.method, *doc.answer.rule]
    body = "\n".join(f"- {md_escape(line)}" for line in lines)
    return f"## {SECTION_TITLES['method']}\n\n{body}"


def verdict_cell(claim: ClaimRow) -> str:
    confidence = "" if claim.confidence is None else f" ({claim.confidence:.2f})"
    return f"{claim.status.upper()}{confidence}"


def _claims(doc: ReportDocument) -> str:
    rows = []
    for c in doc.claims:
        text = c.text
        if c.allowed_scope and c.allowed_scope.lower() not in c.text.lower():
            text += f" — scope: {c.allowed_scope}"
        if c.limitations:
            text += f" — limitations: {c.limitations}"
        if c.unsupported:
            text += f" — {UNSUPPORTED_MARK}: {c.unsupported}"
        if c.override:
            see = f" (see {SECTION_TITLES['counter']})" if doc.answered else ""
            text += f" — reviewer override: {c.override}{see}"
        rows.append([c.label, text, verdict_cell(c), ", ".join(c.evidence)])
    headers = ["Claim", "Approved text", "Verdict (confidence)", "Quotes"]
    text = f"## {SECTION_TITLES['claims']}\n\n" + _table(headers, rows)
    overrides = [c for c in doc.claims if c.override]
    if overrides and not doc.answered:  # else listed under counter-evidence
        lines = [f"{OVERRIDES_TITLE}:", ""]
        for c in overrides:
            lines.append(f"- {c.label}: {md_escape(c.override)}")
            lines.extend(f"  - Contrary evidence: “{md_escape(q)}”" for q in c.contrary)
        text += "\n\n" + "\n".join(lines)
    return text


def _references(doc: ReportDocument) -> str:
    lines = []
    for entry in doc.bibliography:
        hashes = ", ".join(f"`{short(s.sha256)}`" for s in entry.snapshots)
        lines.append(
            f"{entry.number}. \\[{entry.number}\\] {md_escape(entry.reference)} Snapshot {hashes}"
        )
    return f"## {SECTION_TITLES['references']}\n\n" + "\n".join(lines)


# --- appendices ------------------------------------------------------------------------


def _appendix_a(doc: ReportDocument) -> str:
    rows = [
        [
            x.label,
            f"`{x.code[:8]}`",
            x.subquestion,
            x.status.upper(),
            x.review_state,
            x.summary or "; ".join(x.reasons),
        ]
        for x in doc.appendix_a
    ]
    headers = ["Label", "Claim", "Subq.", "Verdict", "Review", "Why it is not in the report"]
    return (
        f"## {APPENDIX_TITLES['a']}\n\n{EXCLUDED_NOTE}\n\n"
        + _table(headers, rows)
        + "\n\n"
        + _set_aside(doc)
    )


_REASON_DETAIL = re.compile(r"\s*(?:\([^)]*\d[^)]*\)|;\s*also:).*$")


def reason_kind(reason: str) -> str:
    """A reason without its per-candidate detail ("off-topic (relevance 0.23)" ->
    "off-topic"), so candidates set aside for one reason are counted together."""
    return _REASON_DETAIL.sub("", reason).strip() or reason


def set_aside_groups(doc: ReportDocument) -> list[tuple[str, int, str, str]]:
    """(reason, count, subquestions, labels) per kind of reason, by first appearance."""
    groups: dict[str, list[Any]] = {}
    for row in doc.appendix_a_set_aside:
        groups.setdefault(reason_kind(row.reason), []).append(row)
    result = []
    for reason, rows in groups.items():
        subs = ", ".join(dict.fromkeys(r.subquestion or "—" for r in rows))
        labels = label_ranges([r.label for r in rows])
        result.append((reason, len(rows), subs, labels))
    return result


def label_ranges(labels: list[str]) -> str:
    """M1, M2, M3, M7 -> "M1–M3, M7" (labels share one prefix letter)."""
    prefix = labels[0][0] if labels else ""
    runs: list[list[int]] = []
    for n in sorted(int(label[1:]) for label in labels if label[1:].isdigit()):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{prefix}{a}" if a == b else f"{prefix}{a}–{prefix}{b}" for a, b in runs)


def _set_aside(doc: ReportDocument) -> str:
    rows = [[reason, count, subs, labels] for reason, count, subs, labels in set_aside_groups(doc)]
    table = _table(["Reason", "Candidates", "Subquestions", "Labels"], rows)
    return f"### {SET_ASIDE_TITLE}\n\n{SET_ASIDE_NOTE}\n\n{table}"


def _appendix_b(doc: ReportDocument) -> str:
    rows = [
        [
            e.label,
            e.claim,
            f"“{e.quote}”",
            f"[{e.source}]",
            f"`{short(e.snapshot_sha256)}` {e.quote_start}–{e.quote_end}",
        ]
        for e in doc.appendix_b
    ]
    headers = ["Quote", "Claim", "Text", "Source", "Snapshot, offsets"]
    return f"## {APPENDIX_TITLES['b']}\n\n" + _table(headers, rows)


def audit_action(row: AuditRow) -> str:
    action = row.action + (" (text narrowed)" if row.text_changed else "")
    action += f" (override of {row.override})" if row.override else ""
    return action + (
        f" (carried over from decision {row.carried_from})" if row.carried_from else ""
    )


def _appendix_c(doc: ReportDocument) -> str:
    rows = [
        [
            when(d.at),
            d.reviewer,
            audit_action(d),
            d.claim,
            " — ".join(p for p in (d.reason_code, d.reason) if p),
        ]
        for d in doc.appendix_c
    ]
    headers = ["When", "Reviewer", "Action", "Claim", "Reason"]
    return f"## {APPENDIX_TITLES['c']}\n\n" + _table(headers, rows)


def config_words(config: dict[str, Any], prefix: str = "") -> list[str]:
    """A run configuration as ``key: value`` phrases (nested keys joined by a dot)."""
    phrases = []
    for key, value in sorted(config.items()):
        name = f"{prefix}{key}".replace("_", " ")
        if isinstance(value, dict):
            phrases += config_words(value, f"{prefix}{key}.")
        elif value in (None, "", [], {}):
            phrases.append(f"{name}: none")
        elif isinstance(value, list):
            phrases.append(f"{name}: {', '.join(str(v) for v in value)}")
        else:
            phrases.append(f"{name}: {value}")
    return phrases


def run_config_words(appendix: PlanAppendix) -> str:
    """The run configuration in words, its library by name (the code's first 8 characters
    in parentheses), not by its code alone."""
    config = dict(appendix.run_config)
    code = str(config.get("library") or "")
    if code in appendix.libraries:
        config["library"] = f"{appendix.libraries[code]} ({code[:8]})"
    return "; ".join(config_words(config))


def stage_notes(stage: StageRow) -> str:
    return "; ".join(f"{k}: {v}" for k, v in stage.notes.items())


def _appendix_d(doc: ReportDocument) -> str:
    d = doc.appendix_d
    lines = [
        f"- Question: {md_escape(d.question)}",
        f"- Scope: {md_escape(d.scope) or '—'}",
        f"- Plan version {d.plan_version} (`{short(d.plan_version_hash)}`); run "
        f"`{d.run_code[:8]}` ({d.run_state}), configuration `{short(d.run_config_hash)}`: "
        + md_escape(run_config_words(d)),
    ]
    for sub in d.subquestions:
        mark = "" if sub.enabled else f" ({NOT_SEARCHED})"
        lines.append(f"- Subquestion {md_escape(sub.key)}{mark}: {md_escape(sub.text)}")
        for query in sub.queries:
            mark = "" if query.enabled or not sub.enabled else f" ({NOT_SEARCHED})"
            lines.append(f"  - \\[{md_escape(query.query_class)}\\] {md_escape(query.text)}{mark}")
    stages = [[stage.label or stage.stage, stage.status, stage_notes(stage)] for stage in d.stages]
    return (
        f"## {APPENDIX_TITLES['d']}\n\n"
        + "\n".join(lines)
        + "\n\n"
        + _table(["Stage", "Status", "Notes"], stages)
        + "\n\nThe full configuration, stage notes and hashes are in the bundle (run.json, "
        "plan_version.json, manifest.json)."
    )


def _appendix_e(doc: ReportDocument) -> str:
    e = doc.appendix_e
    if not e.against_run:
        return f"## {APPENDIX_TITLES['e']}\n\nNo previous run of this plan."
    summary = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in e.summary.items())
    entries = "\n".join(f"- {md_escape(line)}" for line in e.entries) or "_No changes._"
    return (
        f"## {APPENDIX_TITLES['e']}\n\nCompared with run `{e.against_run[:8]}` — "
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
