"""Building the frozen report document (``reports.exports.records.ReportDocument``).

Built once, when a report version is created, from the synthesis output and the ledger
as it stood; stored in ``Report.outline`` so that every later export of that version
says the same thing.

Evidence: a claim's supporting links are grouped by the span they quote (snapshot, quote
start, quote end). A chunk passage and its parent section often quote the same span;
they become one cited quote (one appendix B row) listing every link behind it, each by
its own identity (the link id). Everything is ordered deterministically: the anchor
sentence first, then by score, then by source and offsets.

Excluded claims (rejected by a reviewer, unreviewed, failed, uncertain) appear only by
label, code, status and reason; their text never enters the document. Neither does the
text of a candidate the claim miner set aside. Free-text reasons are redacted against
every withheld text in any variant (``reports.exports.withheld``), and exports scan
their output once more before anything leaves the server.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reports.exports.answer import (
    GapInputs,
    Numbering,
    answer_section,
    counter_section,
    evidence_table,
    gap_rows,
    gaps_note,
    source_quote,
)
from reports.exports.citations import bibliography_entry
from reports.exports.facts import (
    APPROVE,
    NARROW,
    STAGE_DONE,
    STAGE_RUNNING,
    SYNTHESIZING,
    ClaimFacts,
    ContestedFacts,
    DecisionFacts,
    ExcludedClaim,
    GapFacts,
    GapWording,
    LinkFacts,
    PlanFacts,
    RunFacts,
    SetAsideFacts,
    SnapshotFacts,
    SourceFacts,
)
from reports.exports.records import (
    AuditRow,
    BibEntry,
    CheckAppendix,
    CheckFinding,
    ClaimRow,
    DiffAppendix,
    EvidencePassage,
    EvidenceRow,
    ExcludedRow,
    Header,
    OutlineEntry,
    PlanAppendix,
    PlanQueryRow,
    PlanSubquestionRow,
    ReportDocument,
    SectionRow,
    SentenceRow,
    SetAsideRow,
    StageRow,
)
from reports.exports.withheld import WithheldMatcher
from research.pipeline.language.formats import RATIONALE_INTERNALS
from research.pipeline.language.sentences import split_sentences
from research.pipeline.synthesize import Section, Synthesis
from research.providers.usage import Cost, total
from review.audited import AuditedReport
from review.diff import RunDiffRecord

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


# --- cited quotes ---------------------------------------------------------------------


@dataclass(frozen=True)
class CitedQuote:
    """One span of one snapshot that supports a claim, with every link that quotes it (in
    passage order). Which spans a claim cites, and in what order, is its capsule's
    (``review.services.capsules.cited_spans``)."""

    snapshot: SnapshotFacts
    quote: str
    quote_start: int
    quote_end: int
    links: tuple[LinkFacts, ...]

    @property
    def source(self) -> SourceFacts:
        return self.snapshot.source

    @property
    def best_score(self) -> float:
        return max((link.score or 0.0) for link in self.links)

    @property
    def is_anchor(self) -> bool:
        return any(link.is_anchor for link in self.links)


# --- the document ---------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentInputs:
    """Everything ``build_document`` reads, loaded once by ``reports.inputs`` (typed
    records only: building the document runs no query)."""

    plan: PlanFacts
    run: RunFacts
    version: int
    synthesis: Synthesis
    claims: dict[str, ClaimFacts]  # reported claims by code
    quotes: dict[str, list[CitedQuote]]  # their cited quotes by claim code
    excluded: list[ExcludedClaim]  # every other claim, with its reasons
    decisions: list[DecisionFacts]
    diff: RunDiffRecord | None
    created_by: str
    created_at: datetime
    wording: GapWording  # the planner's reading of the question, for the gap rows
    set_aside: Sequence[SetAsideFacts] = ()
    withheld: Sequence[str] = ()
    # The state the run ends in once this version is saved (the synthesizing stage: done);
    # empty when building leaves the run's state as it is (do_build_report).
    ends_in: str = ""
    audited: AuditedReport | None = None  # an audit run's audited report, as frozen
    run_claims: Sequence[ClaimFacts] = ()  # every claim of the run, by pk
    gaps: dict[str, GapFacts] = field(default_factory=dict)  # subquestion key -> gap
    contested: Sequence[ContestedFacts] = ()
    filed_under: dict[str, list[str]] = field(default_factory=dict)


def build_document(inputs: DocumentInputs) -> ReportDocument:
    """Assemble header, bottom line, evidence table, prose, counter-evidence, gaps, claim
    register, references and appendices A–E."""
    redactor = WithheldMatcher(inputs.withheld)
    labels = inputs.synthesis.labels
    evidence, by_source = _evidence_rows(inputs)
    excluded = inputs.excluded
    appendix_a = [_excluded_row(n, x, redactor) for n, x in enumerate(excluded, 1)]
    numbering = _numbering(inputs)
    reported = [inputs.claims[code] for code in labels]
    plan = _plan_and_method(inputs)
    gap_inputs = _gap_inputs(inputs)
    return ReportDocument(
        answer=answer_section(inputs.synthesis.answer, numbering),
        evidence_table=evidence_table(reported, _cited_sources(inputs), numbering),
        counter=counter_section(inputs.contested, reported, numbering, appendix_a, redactor),
        gaps=gap_rows(plan.subquestions, set(labels), gap_inputs, inputs.gaps),
        gaps_note=gaps_note(gap_inputs),
        header=_header(inputs),
        outline=[
            OutlineEntry(key=s.key, title=s.title, claims=[labels[c] for c in s.claims])
            for s in inputs.synthesis.outline
        ],
        sections=[_section(s, labels) for s in inputs.synthesis.sections],
        claims=[_claim_row(inputs.claims[code], labels, evidence, redactor) for code in labels],
        bibliography=_bibliography(inputs.run, inputs.synthesis.sources, by_source),
        appendix_a=appendix_a,
        appendix_a_set_aside=[
            _set_aside_row(n, c, redactor) for n, c in enumerate(inputs.set_aside, 1)
        ],
        appendix_b=evidence,
        appendix_c=_audit_log(inputs.decisions, labels, excluded, redactor),
        appendix_d=plan,
        appendix_e=_diff_appendix(inputs.diff, inputs.claims, redactor),
        check=CheckAppendix(
            synthesizer=inputs.synthesis.synthesizer,
            # Removed sentences stay in Report.check_findings, never in an export.
            findings=[
                CheckFinding(section=f.section, action=f.action, reason=redactor.redact(f.reason))
                for f in inputs.synthesis.findings
            ],
        ),
    )


def _numbering(inputs: DocumentInputs) -> Numbering:
    sources = {key: n for n, key in enumerate(inputs.synthesis.sources, 1)}
    claim_sources = {
        code: sorted({sources[q.source.canonical_id] for q in inputs.quotes[code]})
        for code in inputs.synthesis.labels
    }
    return Numbering(dict(inputs.synthesis.labels), sources, claim_sources)


def _cited_sources(inputs: DocumentInputs) -> dict[str, list[SourceFacts]]:
    cited: dict[str, list[SourceFacts]] = {}
    for code in inputs.synthesis.labels:
        for quote in inputs.quotes[code]:
            if quote.source not in cited.setdefault(code, []):
                cited[code].append(quote.source)
    return cited


def _gap_inputs(inputs: DocumentInputs) -> GapInputs:
    claims: dict[str, list[ClaimFacts]] = {}
    for claim in inputs.run_claims:
        claims.setdefault(claim.subquestion, []).append(claim)
    return GapInputs(
        question=inputs.plan.question,
        scope=inputs.plan.scope,
        library_only=not (inputs.run.config or {}).get("web_adapters"),
        dimensions={sub.key: sub.dimension for sub in inputs.plan.subquestions},
        claims_by_sub=claims,
        wording=inputs.wording,
        filed_under=inputs.filed_under,
    )


def _header(inputs: DocumentInputs) -> Header:
    run, plan = inputs.run, inputs.plan
    return Header(
        title=plan.question,
        report_version=inputs.version,
        plan_code=plan.code,
        plan_version=plan.version,
        plan_version_hash=plan.version_hash,
        run_code=run.code,
        run_config_hash=run.config_hash,
        synthesizer=inputs.synthesis.synthesizer,
        created_by=inputs.created_by,
        created_at=inputs.created_at.isoformat(),
    )


def _section(section: Section, labels: dict[str, str]) -> SectionRow:
    return SectionRow(
        key=section.key,
        title=section.title,
        mode=section.mode,
        sentences=[
            SentenceRow(
                text=s.text,
                claims=[labels[c] for c in s.claims],
                claim_codes=list(s.claims),
                citations=list(s.citations),
            )
            for s in section.sentences
        ],
    )


def _evidence_rows(
    inputs: DocumentInputs,
) -> tuple[list[EvidenceRow], dict[str, tuple[SourceFacts, list[SnapshotFacts]]]]:
    numbers = {key: n for n, key in enumerate(inputs.synthesis.sources, 1)}
    rows: list[EvidenceRow] = []
    by_source: dict[str, tuple[SourceFacts, list[SnapshotFacts]]] = {}
    for code, label in inputs.synthesis.labels.items():
        for quote in inputs.quotes[code]:
            source, snapshot = quote.source, quote.snapshot
            seen = by_source.setdefault(source.canonical_id, (source, []))[1]
            if snapshot not in seen:
                seen.append(snapshot)
            rows.append(
                EvidenceRow(
                    label=f"E{len(rows) + 1}",
                    claim=label,
                    claim_code=code,
                    claim_fingerprint=inputs.claims[code].fingerprint,
                    quote=quote.quote,
                    quote_start=quote.quote_start,
                    quote_end=quote.quote_end,
                    relation=quote.links[0].relation,
                    source=numbers[source.canonical_id],
                    canonical_id=source.canonical_id,
                    published_date=_iso(source.published_date),
                    snapshot_code=snapshot.code,
                    snapshot_sha256=snapshot.text_sha256,
                    fetched_at=snapshot.fetched_at.isoformat(),
                    passages=[_evidence_passage(link) for link in quote.links],
                )
            )
    return rows, by_source


def _evidence_passage(link: LinkFacts) -> EvidencePassage:
    passage = link.passage
    return EvidencePassage(
        link_id=link.pk,
        pool=link.pool,
        kind=passage.kind,
        passage_start=passage.start,
        passage_end=passage.end,
        passage_fingerprint=link.passage_fingerprint,
        passage_sha256=sha256_text(passage.text),
    )


def _iso(value: Any) -> str:
    return value.isoformat() if value else ""


def _claim_row(
    claim: ClaimFacts,
    labels: dict[str, str],
    evidence: list[EvidenceRow],
    redactor: WithheldMatcher | None = None,
) -> ClaimRow:
    """A register row; an override's reason is redacted like the audit trail's reasons, its
    contrary quotes are their sources' words (``source_quote``)."""
    redactor = redactor or WithheldMatcher(())
    redact = redactor.redact
    code = claim.code
    return ClaimRow(
        label=labels[code],
        code=code,
        text=claim.text,
        fingerprint=claim.fingerprint,
        status=claim.status,
        review_state=claim.review_state,
        claim_type=claim.claim_type,
        subquestion=claim.subquestion,
        allowed_scope=claim.allowed_scope,
        limitations=claim.limitations,
        confidence=claim.confidence,
        evidence=[row.label for row in evidence if row.claim_code == code],
        override=redact(override_words(claim)),
        contrary=[
            source_quote(link, redactor)
            for link in claim.evidence
            if link.relation in ("contradicts", "possible-contradiction")
        ],
        unsupported=claim.unsupported,
    )


def override_words(claim: ClaimFacts) -> str:
    """ "FAIL overridden by reviewer: reason" when the standing approval is an override."""
    last = claim.decisions[-1] if claim.decisions else None
    if last is None or last.action != APPROVE or not last.override:
        return ""
    return f"{last.verdict_at_decision.upper()} overridden by {last.reviewer}: {last.reason}"


def _bibliography(
    run: RunFacts,
    order: list[str],
    by_source: dict[str, tuple[SourceFacts, list[SnapshotFacts]]],
) -> list[BibEntry]:
    entries = []
    for number, key in enumerate(order, 1):
        source, snapshots = by_source[key]
        library = run.source_libraries.get(source.pk, "")
        entries.append(bibliography_entry(number, source, snapshots, library=library))
    return entries


def leak_matcher(document: ReportDocument, withheld: Iterable[str]) -> WithheldMatcher:
    """The last scan before an export leaves: withheld wording outside approved words."""
    return WithheldMatcher(withheld, allowed=document.approved_strings())


# --- appendices -----------------------------------------------------------------------


def _excluded_row(number: int, excluded: ExcludedClaim, redactor: WithheldMatcher) -> ExcludedRow:
    claim, reasons = excluded.claim, excluded.reasons
    return ExcludedRow(
        label=f"X{number}",
        code=claim.code,
        fingerprint=claim.fingerprint,
        subquestion=claim.subquestion,
        status=claim.status,
        review_state=claim.review_state,
        disposition=claim.disposition,
        reasons=[redactor.redact(r) for r in reasons],
        summary=redactor.redact(reasons_in_words(reasons)),
    )


SUMMARY_CHARS = 220


def in_words(reason: str) -> str:
    """A reason's headline: its first sentence, before any verifier internals."""
    head = RATIONALE_INTERNALS.split(reason, maxsplit=1)[0].strip()
    head = re.sub(r"^verification (\w+): \1:\s*", r"verification \1: ", head)
    spans = split_sentences(head)
    if spans:
        head = head[spans[0][0] : spans[0][1]]
    if len(head) > SUMMARY_CHARS:
        head = head[: SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return head


def reasons_in_words(reasons: list[str]) -> str:
    """An excluded claim's reasons in one line (the full ones stay in the bundle)."""
    return "; ".join(dict.fromkeys(in_words(r).rstrip(".") for r in reasons if r.strip()))


def _set_aside_row(number: int, candidate: SetAsideFacts, redactor: WithheldMatcher) -> SetAsideRow:
    """A candidate set aside at mining: where it came from and why, never its wording."""
    return SetAsideRow(
        label=f"M{number}",
        fingerprint=candidate.fingerprint,
        subquestion=candidate.subquestion,
        claim_type=candidate.claim_type,
        reason=redactor.redact(candidate.reason),
        canonical_id=redactor.redact(candidate.canonical_id) if candidate.snapshot_sha256 else "",
        snapshot_sha256=candidate.snapshot_sha256,
        quote_start=candidate.quote_start,
        quote_end=candidate.quote_end,
    )


def _audit_log(
    decisions: list[DecisionFacts],
    labels: dict[str, str],
    excluded: list[ExcludedClaim],
    redactor: WithheldMatcher,
) -> list[AuditRow]:
    x_labels = {x.claim.code: f"X{n}" for n, x in enumerate(excluded, 1)}
    rows = []
    for decision in decisions:
        code = decision.claim_code
        rows.append(
            AuditRow(
                at=decision.created_at.isoformat(),
                reviewer=decision.reviewer,
                action=decision.action,
                claim=labels.get(code) or x_labels.get(code, "?"),
                claim_code=code,
                claim_version=decision.claim_version,
                reason_code=decision.reason_code,
                reason=redactor.redact(decision.reason),
                text_changed=decision.action == NARROW,
                text_after_sha256=sha256_text(decision.text_after),
                carried_from=decision.carried_from,
                override=decision.verdict_at_decision.upper() if decision.override else "",
            )
        )
    return rows


def _plan_and_method(inputs: DocumentInputs) -> PlanAppendix:
    """The plan, the run and how it was run. Built by the synthesizing stage, the report
    states the run as it ends when the version is saved (``ends_in``: done, the stage's
    own checkpoint done), not as it stands mid-build ("synthesizing", "running")."""
    plan, run, synthesis, ends_in = inputs.plan, inputs.run, inputs.synthesis, inputs.ends_in
    building = run.state if ends_in else ""
    return PlanAppendix(
        question=plan.question,
        scope=plan.scope,
        constraints=plan.constraints,
        plan_version=plan.version,
        plan_version_hash=plan.version_hash,
        subquestions=_plan_subquestions(plan),
        run_code=run.code,
        run_state=ends_in or run.state,
        run_config=run.config,
        libraries=run.libraries,
        run_config_hash=run.config_hash,
        run_started_at=_iso(run.started_at),
        run_finished_at=_iso(run.finished_at),
        stages=[
            StageRow(
                stage=cp.stage,
                round=cp.round,
                status=STAGE_DONE
                if cp.stage == building and cp.status == STAGE_RUNNING
                else cp.status,
                notes=cp.notes,
                label=cp.label,
            )
            for cp in run.checkpoints
        ],
        method=[
            *METHOD,
            *verification_method(run),
            *audit_method(inputs.audited),
            *cost_method(run),
            f"Synthesizer: {synthesis.synthesizer}.",
            *([synthesis.check.summary()] if synthesis.check else []),
        ],
    )


def audit_method(audit: AuditedReport | None) -> list[str]:
    """An audit run's method in one line: what was imported and how its sentences came out
    (the audited report itself is in the bundle); nothing for a research run."""
    if audit is None:
        return []
    parsed = audit.report
    cited = sum(1 for s in parsed.sentences if s.citations or s.unresolved)
    marks = ", ".join(f"{n} {mark}" for mark, n in audit.counts().items()) or "none yet"
    return [
        f"Audit of an imported {parsed.format} report ({audit.title}): "
        f"{len(parsed.sentences)} sentences, {cited} citing a source, "
        f"{len(parsed.findings)} problem(s) in its citations; each claim checked against "
        f"the source its sentence cites, then against all the evidence. Sentences by mark "
        f"when this version was built: {marks}. The audited report (the original text, "
        "every sentence marked, with its disposition ledger) is in the bundle: "
        "audited/report.md."
    ]


def cost_method(run: RunFacts) -> list[str]:
    """What the run's stages spent before this report was built, as each recorded it in
    its checkpoint's ``cost`` counter (never the clock at export time): seconds of work
    and CPU, and model calls with their tokens or items. The report's own stage is left
    out, since it is still working when the document is frozen."""
    stages = [
        (cp.label, Cost.from_json(cp.counters.get("cost")))
        for cp in run.checkpoints
        if cp.stage != SYNTHESIZING
    ]
    recorded = [(label, cost) for label, cost in stages if cost.recorded]
    if not recorded:
        return []
    spent = total(cost for _, cost in recorded)
    lines = [
        "Cost and time of this run before the report was built, as its stages recorded "
        f"them: {spent.seconds_words()}; LLM: {spent.llm_words()}; model calls: "
        f"{spent.calls_words()}.",
        "Seconds of work per stage (CPU seconds in brackets): "
        + ", ".join(f"{label} {c.wall_s:.1f} ({c.cpu_s:.1f})" for label, c in recorded)
        + ".",
    ]
    used = [(label, cost) for label, cost in recorded if cost.families]
    if used:
        lines.append(
            "Model use per stage: "
            + "; ".join(f"{label}: {cost.family_brackets()}" for label, cost in used)
            + "."
        )
    return lines


def verification_method(run: RunFacts) -> list[str]:
    """How claims were verified on this run: the quorum and every family's part."""
    section = run.counters.get("verification", {})
    families = section.get("families") or {}
    if not families:
        return []
    quorum = section.get("quorum", 2)
    parts = "; ".join(f"{name}: {state}" for name, state in sorted(families.items()))
    lines = [
        f"Verification quorum: a claim PASSed only when {quorum} distinct verifier families "
        "supported it with verbatim quotes, every counted family that ran agreed, and no "
        "credible contradiction from another source was found. Families: " + parts + "."
    ]
    unavailable = section.get("unavailable") or {}
    if unavailable:
        lines.append(
            "Verifier families unavailable during this run (their claims could not PASS): "
            + "; ".join(f"{k} on {v} claim(s)" for k, v in sorted(unavailable.items()))
            + "."
        )
    return lines


def _plan_subquestions(plan: PlanFacts) -> list[PlanSubquestionRow]:
    """The plan's subquestions and queries, each marked when the plan disabled it (a
    disabled subquestion, or a query, was not searched)."""
    return [
        PlanSubquestionRow(
            key=sub.key,
            text=sub.text,
            enabled=sub.enabled,
            queries=[
                PlanQueryRow(key=q.key, text=q.text, query_class=q.query_class, enabled=q.enabled)
                for q in sub.queries
            ],
        )
        for sub in plan.subquestions
    ]


DIFF_TITLES_SHOWN = 5


def _listed(what: str, names: list[str]) -> list[str]:
    """ "sources gone: 7 (A; B; C; D; E and 2 more)", or nothing."""
    if not names:
        return []
    shown = "; ".join(names[:DIFF_TITLES_SHOWN])
    more = f" and {len(names) - DIFF_TITLES_SHOWN} more" if len(names) > DIFF_TITLES_SHOWN else ""
    return [f"{what}: {len(names)} ({shown}{more})"]


def _diff_appendix(
    diff: RunDiffRecord | None, claims: dict[str, ClaimFacts], redactor: WithheldMatcher
) -> DiffAppendix:
    """The diff: reported claims by text, the others counted per kind (their texts are
    not in this report; the run diff page and the stored RunDiff list them)."""
    if diff is None:
        return DiffAppendix()
    shown = {c.fingerprint: c.text for c in claims.values()}
    entries: list[str] = []

    def claim_lines(kind: str, fingerprints: list[str]) -> None:
        entries.extend(f"{kind}: {shown[fp]}" for fp in fingerprints if fp in shown)
        others = sum(1 for fp in fingerprints if fp not in shown)
        if others:
            entries.append(f"{kind}: {others} claim(s) not in this report")

    claim_lines("added", [c.fingerprint for c in diff.added])
    claim_lines("removed", [c.fingerprint for c in diff.removed])
    claim_lines("text changed", [p.new.fingerprint for p in diff.text_changed])
    for flip in sorted({(p.old.status, p.new.status) for p in diff.verdict_flips}):
        pairs = [p for p in diff.verdict_flips if (p.old.status, p.new.status) == flip]
        claim_lines(f"verdict {flip[0]} -> {flip[1]}", [p.new.fingerprint for p in pairs])
    for change in diff.sources_changed:
        entries.append(
            f"source {change.kind}: {change.title or change.canonical_id} "
            f"({', '.join(h[:12] for h in change.old_sha256)} -> "
            f"{', '.join(h[:12] for h in change.new_sha256) or 'not quoted'}); "
            f"{len(change.claims)} claim(s) touched"
        )
    entries += _listed("sources gone", [c.title or c.canonical_id for c in diff.sources_gone])
    if diff.sources_new:
        entries.append(f"new sources: {len(diff.sources_new)}")
    for row in diff.rereview:
        name = shown.get(row.fingerprint) or (
            f"claim {row.fingerprint[:12]} (text not in this report)"
        )
        entries.append(
            f"re-review the {row.action} by {row.reviewer} of {name}: " + "; ".join(row.reasons)
        )
    return DiffAppendix(
        against_run=diff.old_run,
        summary=diff.summary(),
        entries=[redactor.redact(e) for e in entries],
    )
