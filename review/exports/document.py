"""The frozen report document: one JSON-able dict every export format renders.

Built once, when a report version is created, from the synthesis output and the ledger
as it stood; stored in ``Report.outline`` (key ``document``) so that every later export
of that version says the same thing.

Excluded claims (rejected by a reviewer, unreviewed, failed, uncertain) appear only by
label, code, status and reason; their text never enters the document. Neither does the
text of a candidate the claim miner set aside (a question, a statement of aim or method,
over the claim budget, …): appendix A lists those by label, subquestion, reason and
source offsets. Free-text reasons are redacted against every withheld text, and exports
scan their output for withheld texts once more before anything leaves the server
(``find_withheld``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db.models import Q

from ledger.models import Candidate, CandidateState, Claim, EvidenceLink, Snapshot, Source
from research.models import Run
from research.pipeline.synthesize import Synthesis
from research.pipeline.text import content_words
from review.diff import RunDiff
from review.exports.citations import bibliography_entry, reference_text
from review.models import Action, ReviewDecision

FORMAT = "evidence-bureau-report/1"
REDACTED = "[withheld claim text]"
# A set-aside candidate with fewer content words states nothing (the miner's own "too
# short to state a fact" threshold, MineConfig.min_content_words): its words may appear.
MIN_WITHHELD_CONTENT_WORDS = 3

METHOD = [
    "Sources were searched and captured as immutable, hashed snapshots; passages carry "
    "exact character offsets into their snapshot text.",
    "Atomic claims were mined, counter-evidence was searched separately, and each claim "
    "was verified against verbatim quotes (PASS / FAIL / UNCERTAIN).",
    "Reviewers approved, narrowed or rejected claims; every decision is in Appendix C.",
    "This report was synthesized from approved claim capsules only; every sentence cites "
    "the sources of its claims' quotes (Appendix B). Excluded claims are listed, without "
    "their text, in Appendix A.",
]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_document(
    *,
    run: Run,
    version: int,
    synthesis: Synthesis,
    claims: dict[str, Claim],
    links: dict[str, list[EvidenceLink]],
    excluded: list[tuple[Claim, list[str]]],
    decisions: list[ReviewDecision],
    diff: RunDiff | None,
    created_by: str,
    created_at: datetime,
    set_aside: Sequence[Candidate] = (),
) -> dict[str, Any]:
    """Assemble header, prose, claim register, references and appendices A–E.

    ``claims``/``links``: the approved capsules' claims and supporting links by code;
    ``excluded``: every other claim of the run with the reasons it was left out;
    ``set_aside``: the candidates mining dropped before verification (appendix A too).
    """
    withheld = withheld_texts(run, set(claims))
    labels = synthesis.labels
    evidence, by_source = _evidence_rows(synthesis, claims, links)
    return {
        "format": FORMAT,
        "header": _header(run, version, synthesis, created_by, created_at),
        "outline": [
            {"key": s.key, "title": s.title, "claims": [labels[c] for c in s.claims]}
            for s in synthesis.outline
        ],
        "sections": [_section(s, labels) for s in synthesis.sections],
        "claims": [_claim_row(claims[code], labels, evidence) for code in labels],
        "bibliography": _bibliography(synthesis.sources, by_source),
        "appendix_a": [_excluded_row(n, c, r, withheld) for n, (c, r) in enumerate(excluded, 1)],
        "appendix_a_set_aside": [
            _set_aside_row(n, c, withheld) for n, c in enumerate(set_aside, 1)
        ],
        "appendix_b": evidence,
        "appendix_c": _audit_log(decisions, labels, excluded, withheld),
        "appendix_d": _plan_and_method(run, synthesis),
        "appendix_e": _diff_appendix(diff, claims, withheld),
        "check": {
            "synthesizer": synthesis.synthesizer,
            # Removed sentences stay in Report.check_findings, never in an export.
            "findings": [
                {"section": f.section, "action": f.action, "reason": f.reason}
                for f in synthesis.findings
            ],
        },
    }


def _header(
    run: Run, version: int, synthesis: Synthesis, created_by: str, created_at: datetime
) -> dict[str, Any]:
    plan_version = run.plan_version
    plan = plan_version.plan
    return {
        "title": plan.question,
        "report_version": version,
        "plan_code": str(plan.code),
        "plan_version": plan_version.number,
        "plan_version_hash": plan_version.content_hash,
        "run_code": str(run.code),
        "run_config_hash": run.config_hash,
        "synthesizer": synthesis.synthesizer,
        "created_by": created_by,
        "created_at": created_at.isoformat(),
    }


def _section(section: Any, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "key": section.key,
        "title": section.title,
        "mode": section.mode,
        "sentences": [
            {
                "text": s.text,
                "claims": [labels[c] for c in s.claims],
                "claim_codes": list(s.claims),
                "citations": list(s.citations),
            }
            for s in section.sentences
        ],
    }


def _evidence_rows(
    synthesis: Synthesis, claims: dict[str, Claim], links: dict[str, list[EvidenceLink]]
) -> tuple[list[dict[str, Any]], dict[str, tuple[Source, list[Snapshot]]]]:
    numbers = {key: n for n, key in enumerate(synthesis.sources, 1)}
    rows: list[dict[str, Any]] = []
    by_source: dict[str, tuple[Source, list[Snapshot]]] = {}
    for code, label in synthesis.labels.items():
        for link in links[code]:
            snapshot, passage = link.snapshot, link.passage
            source = snapshot.source
            seen = by_source.setdefault(source.canonical_id, (source, []))[1]
            if snapshot not in seen:
                seen.append(snapshot)
            rows.append(
                {
                    "label": f"E{len(rows) + 1}",
                    "claim": label,
                    "claim_code": code,
                    "claim_fingerprint": claims[code].fingerprint,
                    "quote": link.quote,
                    "quote_start": link.quote_start,
                    "quote_end": link.quote_end,
                    "relation": link.relation,
                    "source": numbers[source.canonical_id],
                    "canonical_id": source.canonical_id,
                    "published_date": _iso(source.published_date),
                    "snapshot_code": str(snapshot.code),
                    "snapshot_sha256": snapshot.text_sha256,
                    "fetched_at": snapshot.fetched_at.isoformat(),
                    "passage_start": passage.start,
                    "passage_end": passage.end,
                    "passage_fingerprint": link.passage_fingerprint,
                    "passage_sha256": sha256_text(passage.text),
                }
            )
    return rows, by_source


def _iso(value: Any) -> str:
    return value.isoformat() if value else ""


def _claim_row(
    claim: Claim, labels: dict[str, str], evidence: list[dict[str, Any]]
) -> dict[str, Any]:
    code = str(claim.code)
    return {
        "label": labels[code],
        "code": code,
        "text": claim.text,
        "fingerprint": claim.fingerprint,
        "status": claim.status,
        "review_state": claim.review_state,
        "claim_type": claim.claim_type,
        "subquestion": claim.subquestion.key if claim.subquestion else "",
        "allowed_scope": claim.allowed_scope,
        "limitations": claim.limitations,
        "confidence": claim.confidence,
        "evidence": [row["label"] for row in evidence if row["claim_code"] == code],
    }


def _bibliography(
    order: list[str], by_source: dict[str, tuple[Source, list[Snapshot]]]
) -> list[dict[str, Any]]:
    entries = []
    for number, key in enumerate(order, 1):
        source, snapshots = by_source[key]
        entry = bibliography_entry(number, source, snapshots)
        entry["reference"] = reference_text(entry)
        entries.append(entry)
    return entries


# --- appendices -----------------------------------------------------------------------


def withheld_texts(run: Run, approved_codes: set[str]) -> list[str]:
    """Every claim text of the run a report may not print, longest first.

    That is the text of each claim outside the report, every text a decision recorded for
    it, the pre-narrowing text of reported claims (a broader scope than approved), and
    the wording of every candidate that did not become a reported claim: set aside at
    mining, or kept / merged into a claim outside the report.
    """
    texts: set[str] = set()
    for claim in Claim.objects.filter(run=run).exclude(code__in=approved_codes):
        texts.add(claim.text)
    texts.update(_withheld_candidate_texts(run, approved_codes))
    decisions = ReviewDecision.objects.filter(claim__run=run).select_related("claim")
    for decision in decisions:
        if str(decision.claim.code) in approved_codes:
            if decision.text_before != decision.claim.text:
                texts.add(decision.text_before)
        else:
            texts.update((decision.text_before, decision.text_after))
    return sorted((t for t in texts if t.strip()), key=lambda t: (-len(t), t))


def _withheld_candidate_texts(run: Run, approved_codes: set[str]) -> set[str]:
    reported = Claim.objects.filter(run=run, code__in=approved_codes)
    outside = Q(state=CandidateState.DROPPED) | Q(claim__isnull=True)
    outside |= ~Q(claim__code__in=approved_codes)
    rows = (
        Candidate.objects.filter(run=run)
        .filter(outside)
        .exclude(fingerprint__in=reported.values("fingerprint"))
        .values_list("text", flat=True)
    )
    return {t for t in rows if len(content_words(t)) >= MIN_WITHHELD_CONTENT_WORDS}


def set_aside_candidates(run: Run) -> list[Candidate]:
    """The candidates mining dropped before verification, in subquestion order."""
    return list(
        Candidate.objects.filter(run=run, state=CandidateState.DROPPED)
        .select_related("subquestion", "snapshot__source")
        .defer("snapshot__text", "snapshot__raw", "snapshot__http_headers")
        .order_by("subquestion__position", "subquestion__key", "pk")
    )


def redact(text: str, withheld: list[str]) -> str:
    lowered = text.lower()
    for secret in withheld:
        start = lowered.find(secret.lower())
        while start != -1:
            text = text[:start] + REDACTED + text[start + len(secret) :]
            lowered = text.lower()
            start = lowered.find(secret.lower(), start + len(REDACTED))
    return text


def _excluded_row(
    number: int, claim: Claim, reasons: list[str], withheld: list[str]
) -> dict[str, Any]:
    return {
        "label": f"X{number}",
        "code": str(claim.code),
        "fingerprint": claim.fingerprint,
        "subquestion": claim.subquestion.key if claim.subquestion else "",
        "status": claim.status,
        "review_state": claim.review_state,
        "disposition": claim.disposition,
        "reasons": [redact(r, withheld) for r in reasons],
    }


def _set_aside_row(number: int, candidate: Candidate, withheld: list[str]) -> dict[str, Any]:
    """A candidate set aside at mining: where it came from and why, never its wording."""
    snapshot = candidate.snapshot
    reason = candidate.reason
    return {
        "label": f"M{number}",
        "fingerprint": candidate.fingerprint,
        "subquestion": candidate.subquestion.key if candidate.subquestion else "",
        "claim_type": candidate.claim_type,
        "reason": redact(reason, withheld),
        "canonical_id": redact(snapshot.source.canonical_id, withheld) if snapshot else "",
        "snapshot_sha256": snapshot.text_sha256 if snapshot else "",
        "quote_start": candidate.quote_start,
        "quote_end": candidate.quote_end,
    }


def _audit_log(
    decisions: list[ReviewDecision],
    labels: dict[str, str],
    excluded: list[tuple[Claim, list[str]]],
    withheld: list[str],
) -> list[dict[str, Any]]:
    x_labels = {str(c.code): f"X{n}" for n, (c, _) in enumerate(excluded, 1)}
    rows = []
    for decision in decisions:
        code = str(decision.claim.code)
        rows.append(
            {
                "at": decision.created_at.isoformat(),
                "reviewer": decision.reviewer.get_username(),
                "action": decision.action,
                "claim": labels.get(code) or x_labels.get(code, "?"),
                "claim_code": code,
                "claim_version": decision.claim_version,
                "reason_code": decision.reason_code,
                "reason": redact(decision.reason, withheld),
                "text_changed": decision.action == Action.NARROW,
                "text_after_sha256": sha256_text(decision.text_after),
            }
        )
    return rows


def _plan_and_method(run: Run, synthesis: Synthesis) -> dict[str, Any]:
    plan_version = run.plan_version
    plan = plan_version.plan
    return {
        "question": plan.question,
        "scope": plan.scope,
        "constraints": plan.constraints,
        "plan_version": plan_version.number,
        "plan_version_hash": plan_version.content_hash,
        "plan_content": plan_version.content,
        "run_code": str(run.code),
        "run_state": run.state,
        "run_config": run.config,
        "run_config_hash": run.config_hash,
        "run_started_at": _iso(run.started_at),
        "run_finished_at": _iso(run.finished_at),
        "stages": [
            {"stage": cp.stage, "round": cp.round, "status": cp.status, "notes": cp.notes}
            for cp in run.checkpoints.all()
        ],
        "method": [*METHOD, f"Synthesizer: {synthesis.synthesizer}."],
    }


def _diff_appendix(
    diff: RunDiff | None, claims: dict[str, Claim], withheld: list[str]
) -> dict[str, Any]:
    """The diff with texts only for claims this report states (others by fingerprint)."""
    if diff is None:
        return {"against_run": "", "summary": {}, "entries": []}
    shown = {c.fingerprint: c.text for c in claims.values()}

    def name(fingerprint: str) -> str:
        return shown.get(fingerprint) or f"claim {fingerprint[:12]} (text not in this report)"

    entries = [f"added: {name(c.fingerprint)}" for c in diff.added]
    entries += [f"removed: {name(c.fingerprint)}" for c in diff.removed]
    entries += [f"text changed: {name(p.new.fingerprint)}" for p in diff.text_changed]
    entries += [
        f"verdict {p.old.status} -> {p.new.status}: {name(p.new.fingerprint)}"
        for p in diff.verdict_flips
    ]
    for change in diff.sources_changed + diff.sources_gone:
        entries.append(
            f"source {change.kind}: {change.title or change.canonical_id} "
            f"({', '.join(h[:12] for h in change.old_sha256)} -> "
            f"{', '.join(h[:12] for h in change.new_sha256) or 'not quoted'}); "
            f"{len(change.claims)} claim(s) touched"
        )
    entries += [f"new source: {cid}" for cid in diff.sources_new]
    entries += [
        f"re-review the {row.action} by {row.reviewer} of {name(row.fingerprint)}: "
        + "; ".join(row.reasons)
        for row in diff.rereview
    ]
    return {
        "against_run": diff.old_run,
        "summary": diff.summary(),
        "entries": [redact(e, withheld) for e in entries],
    }


def approved_strings(document: dict[str, Any]) -> list[str]:
    """What a report may legitimately print: approved texts, scopes, quotes, titles, and
    the plan's own words (its question, scope, subquestions and queries are printed in
    every report, whatever the review decided)."""
    strings: list[str] = []
    for claim in document["claims"]:
        strings += [claim["text"], claim["allowed_scope"], claim["limitations"]]
    strings += [row["quote"] for row in document["appendix_b"]]
    strings += [entry["title"] for entry in document["bibliography"]]
    strings += _plan_strings(document)
    return [s.lower() for s in strings if s]


def _plan_strings(document: dict[str, Any]) -> list[str]:
    plan = document.get("appendix_d") or {}
    strings = [document["header"]["title"], plan.get("question", ""), plan.get("scope", "")]
    for sub in (plan.get("plan_content") or {}).get("subquestions", []):
        strings.append(str(sub.get("text", "")))
        strings += [str(query.get("text", "")) for query in sub.get("queries", [])]
    return [" ".join(s.split()) for s in strings]


def find_withheld(output: str, withheld: list[str], document: dict[str, Any]) -> str | None:
    """The first withheld claim text found in ``output``, or None.

    A withheld text that is part of an approved string (e.g. a rejected claim whose words
    are a quote an approved claim cites) cannot be told apart, so it is not searched.
    """
    allowed = approved_strings(document)
    haystack = " ".join(output.split()).lower()
    for text in withheld:
        needle = " ".join(text.split()).lower()
        # Compare without end punctuation: a withheld "Title of a source." is the
        # bibliography's "Title of a source", which the report may print.
        core = needle.rstrip(" .;:!?")
        if any(core in a for a in allowed):
            continue
        if needle in haystack:
            return text
    return None
