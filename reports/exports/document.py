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
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Q

from ledger.models import (
    Candidate,
    CandidateState,
    Claim,
    EvidenceGap,
    EvidenceLink,
    Library,
    Relation,
    Snapshot,
    Source,
)
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
from reports.preview import unsupported_reason
from research.models import Run, RunState, StageStatus
from research.pipeline.language.formats import RATIONALE_INTERNALS
from research.pipeline.language.lexicon import content_words
from research.pipeline.language.sentences import split_sentences
from research.pipeline.synthesize import Section, Synthesis
from research.providers.usage import Cost, total
from review.audited import AuditedReport
from review.diff import RunDiffRecord
from review.models import Action, ReviewDecision

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
    """One span of one snapshot that supports a claim, with every link that quotes it."""

    snapshot: Snapshot
    quote: str
    quote_start: int
    quote_end: int
    links: tuple[EvidenceLink, ...]

    @property
    def source(self) -> Source:
        return self.snapshot.source

    @property
    def best_score(self) -> float:
        return max((link.score or 0.0) for link in self.links)

    @property
    def is_anchor(self) -> bool:
        return any(link.is_anchor for link in self.links)


def _link_order(link: EvidenceLink) -> tuple[str, int, int, str, int]:
    return (link.passage.kind, link.passage.start, link.passage.end, link.pool, link.pk)


def cited_quotes(links: Iterable[EvidenceLink], *, override: bool = False) -> list[CitedQuote]:
    """A claim's supporting links, one entry per quoted span, in a fixed order.

    Only ``supports`` links are cited (never background or contradicting quotes). A claim
    a reviewer approved by *override* that no verifier found supported cites its anchor
    (the sentence it was mined from), so it never silently drops out of the report; the
    claim register marks it as an override. Order: the anchor sentence's span first, then
    best score, then source, snapshot and offsets.
    """
    links = list(links)
    cited = [link for link in links if link.relation == Relation.SUPPORTS]
    if override and not cited:
        cited = [link for link in links if link.is_anchor]
    spans: dict[tuple[int, int, int], list[EvidenceLink]] = {}
    for link in cited:
        spans.setdefault((link.snapshot_id, link.quote_start, link.quote_end), []).append(link)
    quotes = [
        CitedQuote(
            snapshot=group[0].snapshot,
            quote=group[0].quote,
            quote_start=start,
            quote_end=end,
            links=tuple(sorted(group, key=_link_order)),
        )
        for (_, start, end), group in spans.items()
    ]
    return sorted(
        quotes,
        key=lambda q: (
            not q.is_anchor,
            -q.best_score,
            q.source.canonical_id,
            q.snapshot.text_sha256,
            q.quote_start,
            q.quote_end,
        ),
    )


# --- the document ---------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentInputs:
    """Everything ``build_document`` reads, loaded by ``reports.build``."""

    run: Run
    version: int
    synthesis: Synthesis
    claims: dict[str, Claim]  # reported claims by code
    quotes: dict[str, list[CitedQuote]]  # their cited quotes by claim code
    excluded: list[tuple[Claim, list[str]]]  # every other claim, with its reasons
    decisions: list[ReviewDecision]
    diff: RunDiffRecord | None
    created_by: str
    created_at: datetime
    set_aside: Sequence[Candidate] = ()
    withheld: Sequence[str] = ()
    # The state the run ends in once this version is saved (the synthesizing stage: done);
    # empty when building leaves the run's state as it is (do_build_report).
    ends_in: str = ""
    audited: AuditedReport | None = None  # an audit run's audited report, as frozen


def build_document(inputs: DocumentInputs) -> ReportDocument:
    """Assemble header, bottom line, evidence table, prose, counter-evidence, gaps, claim
    register, references and appendices A–E."""
    redactor = WithheldMatcher(inputs.withheld)
    labels = inputs.synthesis.labels
    evidence, by_source = _evidence_rows(inputs)
    excluded = inputs.excluded
    appendix_a = [_excluded_row(n, c, r, redactor) for n, (c, r) in enumerate(excluded, 1)]
    numbering = _numbering(inputs)
    reported = [inputs.claims[code] for code in labels]
    plan = _plan_and_method(inputs.run, inputs.synthesis, inputs.ends_in, inputs.audited)
    gap_inputs = _gap_inputs(inputs)
    return ReportDocument(
        answer=answer_section(inputs.synthesis.answer, numbering),
        evidence_table=evidence_table(reported, _cited_sources(inputs), numbering),
        counter=counter_section(inputs.run, reported, numbering, appendix_a, redactor),
        gaps=gap_rows(plan.subquestions, set(labels), gap_inputs, _evidence_gaps(inputs.run)),
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


def _cited_sources(inputs: DocumentInputs) -> dict[str, list[Source]]:
    cited: dict[str, list[Source]] = {}
    for code in inputs.synthesis.labels:
        for quote in inputs.quotes[code]:
            if quote.source not in cited.setdefault(code, []):
                cited[code].append(quote.source)
    return cited


def _gap_inputs(inputs: DocumentInputs) -> GapInputs:
    run = inputs.run
    plan = run.plan_version.plan
    content = run.plan_version.content
    claims: dict[str, list[Claim]] = {}
    for claim in Claim.objects.filter(run=run).select_related("subquestion").order_by("pk"):
        claims.setdefault(claim.subquestion.key if claim.subquestion else "", []).append(claim)
    return GapInputs(
        question=plan.question,
        scope=plan.scope,
        library_only=not (run.config or {}).get("web_adapters"),
        dimensions={
            str(sub.get("key", "")): str(sub.get("dimension", ""))
            for sub in content.get("subquestions", [])
        },
        claims_by_sub=claims,
        filed_under=_filed_under(run),
    )


def _filed_under(run: Run) -> dict[str, list[str]]:
    """Subquestion key -> the other subquestion keys its merged findings are claims of."""
    filed: dict[str, list[str]] = {}
    merged = Candidate.objects.filter(
        run=run, state=CandidateState.MERGED, claim__subquestion__isnull=False
    ).select_related("subquestion", "claim__subquestion")
    for candidate in merged.order_by("pk"):
        here = candidate.subquestion.key if candidate.subquestion else ""
        there = (
            candidate.claim.subquestion.key
            if candidate.claim and candidate.claim.subquestion
            else ""
        )
        if here and there and here != there:
            filed.setdefault(here, []).append(there)
    return filed


def _evidence_gaps(run: Run) -> dict[str, EvidenceGap]:
    rows = EvidenceGap.objects.filter(run=run).select_related("subquestion")
    return {row.subquestion.key: row for row in rows if row.subquestion is not None}


def _header(inputs: DocumentInputs) -> Header:
    run = inputs.run
    plan_version = run.plan_version
    return Header(
        title=plan_version.plan.question,
        report_version=inputs.version,
        plan_code=str(plan_version.plan.code),
        plan_version=plan_version.number,
        plan_version_hash=plan_version.content_hash,
        run_code=str(run.code),
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
) -> tuple[list[EvidenceRow], dict[str, tuple[Source, list[Snapshot]]]]:
    numbers = {key: n for n, key in enumerate(inputs.synthesis.sources, 1)}
    rows: list[EvidenceRow] = []
    by_source: dict[str, tuple[Source, list[Snapshot]]] = {}
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
                    snapshot_code=str(snapshot.code),
                    snapshot_sha256=snapshot.text_sha256,
                    fetched_at=snapshot.fetched_at.isoformat(),
                    passages=[_evidence_passage(link) for link in quote.links],
                )
            )
    return rows, by_source


def _evidence_passage(link: EvidenceLink) -> EvidencePassage:
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
    claim: Claim,
    labels: dict[str, str],
    evidence: list[EvidenceRow],
    redactor: WithheldMatcher | None = None,
) -> ClaimRow:
    """A register row; an override's reason is redacted like the audit trail's reasons, its
    contrary quotes are their sources' words (``source_quote``)."""
    redactor = redactor or WithheldMatcher(())
    redact = redactor.redact
    code = str(claim.code)
    return ClaimRow(
        label=labels[code],
        code=code,
        text=claim.text,
        fingerprint=claim.fingerprint,
        status=claim.status,
        review_state=claim.review_state,
        claim_type=claim.claim_type,
        subquestion=claim.subquestion.key if claim.subquestion else "",
        allowed_scope=claim.allowed_scope,
        limitations=claim.limitations,
        confidence=claim.confidence,
        evidence=[row.label for row in evidence if row.claim_code == code],
        override=redact(override_words(claim)),
        contrary=[
            source_quote(link, redactor)
            for link in claim.evidence.all()
            if link.relation in ("contradicts", "possible-contradiction")
        ],
        unsupported=unsupported_reason(claim),
    )


def override_words(claim: Claim) -> str:
    """ "FAIL overridden by reviewer: reason" when the standing approval is an override."""
    decisions = sorted(claim.decisions.all(), key=lambda d: (d.created_at, d.pk))
    last = decisions[-1] if decisions else None
    if last is None or last.action != Action.APPROVE or not last.override:
        return ""
    return (
        f"{last.verdict_at_decision.upper()} overridden by {last.reviewer.get_username()}: "
        f"{last.reason}"
    )


def _bibliography(
    run: Run, order: list[str], by_source: dict[str, tuple[Source, list[Snapshot]]]
) -> list[BibEntry]:
    libraries = source_libraries(run, [source for source, _ in by_source.values()])
    entries = []
    for number, key in enumerate(order, 1):
        source, snapshots = by_source[key]
        library = libraries.get(source.pk, "")
        entries.append(bibliography_entry(number, source, snapshots, library=library))
    return entries


def source_libraries(run: Run, sources: Sequence[Source]) -> dict[int, str]:
    """The name of the library each source was found in (one query): the run's own
    library when the source is in it, else the first of its libraries by name."""
    own = str((run.config or {}).get("library") or "")
    rows = Library.objects.filter(sources__in=[s.pk for s in sources]).values_list(
        "sources__pk", "code", "name"
    )
    found: dict[int, str] = {}
    for pk, _code, name in sorted(rows, key=lambda r: (str(r[1]) != own, r[2], str(r[1]))):
        found.setdefault(pk, name)
    return found


def library_names(run: Run) -> dict[str, str]:
    """The run configuration's library by code -> its name (Appendix D names it)."""
    code = str((run.config or {}).get("library") or "")
    if not code:
        return {}
    try:
        library = Library.objects.filter(code=code).first()
    except ValidationError:  # not a UUID: a hand-edited configuration
        return {}
    return {code: library.name} if library is not None else {}


# --- withheld texts -------------------------------------------------------------------


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


def leak_matcher(document: ReportDocument, withheld: Iterable[str]) -> WithheldMatcher:
    """The last scan before an export leaves: withheld wording outside approved words."""
    return WithheldMatcher(withheld, allowed=document.approved_strings())


# --- appendices -----------------------------------------------------------------------


def _excluded_row(
    number: int, claim: Claim, reasons: list[str], redactor: WithheldMatcher
) -> ExcludedRow:
    return ExcludedRow(
        label=f"X{number}",
        code=str(claim.code),
        fingerprint=claim.fingerprint,
        subquestion=claim.subquestion.key if claim.subquestion else "",
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


def _set_aside_row(number: int, candidate: Candidate, redactor: WithheldMatcher) -> SetAsideRow:
    """A candidate set aside at mining: where it came from and why, never its wording."""
    snapshot = candidate.snapshot
    return SetAsideRow(
        label=f"M{number}",
        fingerprint=candidate.fingerprint,
        subquestion=candidate.subquestion.key if candidate.subquestion else "",
        claim_type=candidate.claim_type,
        reason=redactor.redact(candidate.reason),
        canonical_id=redactor.redact(snapshot.source.canonical_id) if snapshot else "",
        snapshot_sha256=snapshot.text_sha256 if snapshot else "",
        quote_start=candidate.quote_start,
        quote_end=candidate.quote_end,
    )


def _audit_log(
    decisions: list[ReviewDecision],
    labels: dict[str, str],
    excluded: list[tuple[Claim, list[str]]],
    redactor: WithheldMatcher,
) -> list[AuditRow]:
    x_labels = {str(c.code): f"X{n}" for n, (c, _) in enumerate(excluded, 1)}
    rows = []
    for decision in decisions:
        code = str(decision.claim.code)
        carried = getattr(decision, "carried_from", None)
        rows.append(
            AuditRow(
                at=decision.created_at.isoformat(),
                reviewer=decision.reviewer.get_username(),
                action=decision.action,
                claim=labels.get(code) or x_labels.get(code, "?"),
                claim_code=code,
                claim_version=decision.claim_version,
                reason_code=decision.reason_code,
                reason=redactor.redact(decision.reason),
                text_changed=decision.action == Action.NARROW,
                text_after_sha256=sha256_text(decision.text_after),
                carried_from=str(carried.code) if carried is not None else "",
                override=decision.verdict_at_decision.upper() if decision.override else "",
            )
        )
    return rows


def _plan_and_method(
    run: Run, synthesis: Synthesis, ends_in: str = "", audited: AuditedReport | None = None
) -> PlanAppendix:
    """The plan, the run and how it was run. Built by the synthesizing stage, the report
    states the run as it ends when the version is saved (``ends_in``: done, the stage's
    own checkpoint done), not as it stands mid-build ("synthesizing", "running")."""
    plan_version = run.plan_version
    plan = plan_version.plan
    building = run.state if ends_in else ""
    return PlanAppendix(
        question=plan.question,
        scope=plan.scope,
        constraints=plan.constraints or {},
        plan_version=plan_version.number,
        plan_version_hash=plan_version.content_hash,
        subquestions=_plan_subquestions(plan_version.content),
        run_code=str(run.code),
        run_state=ends_in or run.state,
        run_config=run.config,
        libraries=library_names(run),
        run_config_hash=run.config_hash,
        run_started_at=_iso(run.started_at),
        run_finished_at=_iso(run.finished_at),
        stages=[
            StageRow(
                stage=cp.stage,
                round=cp.round,
                status=StageStatus.DONE
                if cp.stage == building and cp.status == StageStatus.RUNNING
                else cp.status,
                notes=cp.notes,
                label=cp.label,
            )
            for cp in run.checkpoints.order_by("started_at", "pk")
        ],
        method=[
            *METHOD,
            *verification_method(run),
            *audit_method(audited),
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


def cost_method(run: Run) -> list[str]:
    """What the run's stages spent before this report was built, as each recorded it in
    its checkpoint's ``cost`` counter (never the clock at export time): seconds of work
    and CPU, and model calls with their tokens or items. The report's own stage is left
    out, since it is still working when the document is frozen."""
    stages = [
        (cp.label, Cost.from_json(cp.counters.get("cost")))
        for cp in run.checkpoints.order_by("started_at", "pk")
        if cp.stage != RunState.SYNTHESIZING
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


def verification_method(run: Run) -> list[str]:
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


def _enabled(item: dict[str, Any]) -> bool:
    return item.get("enabled", True) is not False


def _plan_subquestions(content: dict[str, Any]) -> list[PlanSubquestionRow]:
    """The plan's subquestions and queries, each marked when the plan disabled it (a
    disabled subquestion, or a query, was not searched)."""
    return [
        PlanSubquestionRow(
            key=str(sub.get("key", "")),
            text=str(sub.get("text", "")),
            enabled=_enabled(sub),
            queries=[
                PlanQueryRow(
                    key=str(q.get("key", "")),
                    text=str(q.get("text", "")),
                    query_class=str(q.get("query_class", "")),
                    enabled=sub.get("enabled", True) is not False
                    and q.get("enabled", True) is not False,
                )
                for q in sub.get("queries", [])
            ],
        )
        for sub in content.get("subquestions", [])
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
    diff: RunDiffRecord | None, claims: dict[str, Claim], redactor: WithheldMatcher
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
