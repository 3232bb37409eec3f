"""Everything a report version is built from, loaded once per build into typed records.

``load_report_inputs(run)`` reads the plan (its content parsed once), the run and its
checkpoints, the approved claims with their cited quotes, every other claim with the
reasons it is left out, the review trail, the candidates mining set aside, evidence gaps,
contested pairs, the run diff, an audit run's audited report and the planner's reading
of the question — each once — into the frozen records of ``reports.exports.facts``.
``ReportInputs.document_inputs`` then hands ``build_document`` those records only: the
document builder and the exporters run no query and never call the planner.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db.models import Prefetch

from ledger.models import (
    Candidate,
    CandidateState,
    Claim,
    ContestedPair,
    EvidenceGap,
    EvidenceLink,
    Library,
    ReviewState,
    Snapshot,
    Source,
    Verdict,
)
from reports.exports.document import MIN_WITHHELD_CONTENT_WORDS, CitedQuote, DocumentInputs
from reports.exports.facts import (
    CheckpointFacts,
    ClaimFacts,
    ContestedFacts,
    DecisionFacts,
    ExcludedClaim,
    GapFacts,
    GapWording,
    LinkFacts,
    PassageFacts,
    PlanFacts,
    ProfileFacts,
    QueryFacts,
    RunFacts,
    SetAsideFacts,
    SnapshotFacts,
    SourceFacts,
    SubquestionFacts,
    VoteFacts,
)
from reports.integrity import quote_problems
from reports.preview import left_out_reason
from research.models import PlanVersion, Run
from research.pipeline import report_check
from research.pipeline.language.lexicon import content_words
from research.pipeline.planner import analyze_question, field_register
from research.pipeline.records import parse_plan
from research.pipeline.synthesize import Capsule, Synthesis, synthesize
from research.providers.llm import LLMClient
from review.audited import AuditedReport
from review.audits import audit_of
from review.diff import RunDiffRecord
from review.models import ReviewDecision
from review.readers import run_decisions
from review.rundiffs import run_diff_record
from review.services.capsules import approved_capsules, unsupported_reason
from review.services.gate import gate_status


class ReportRefused(Exception):
    """No report now: the gate is closed or nothing approved can be cited."""


@dataclass(frozen=True)
class CandidateFacts:
    """A mining candidate, for the withheld wording and the "filed under" map."""

    text: str
    fingerprint: str
    state: str
    claim_code: str  # "" when it became no claim


@dataclass(frozen=True)
class ReportInputs:
    """What synthesis may read (approved capsules only) and what the document needs."""

    plan: PlanFacts
    run: RunFacts
    capsules: tuple[Capsule, ...]  # what synthesis reads (review.services.capsules)
    claims: dict[str, ClaimFacts]  # approved claims by code, in review order
    quotes: dict[str, list[CitedQuote]]  # their cited quotes
    run_claims: tuple[ClaimFacts, ...]  # every claim of the run, by pk
    reasons: dict[str, list[str]]  # claim code -> why a report leaving it out does
    decisions: tuple[DecisionFacts, ...]  # the run's audit trail, oldest first
    candidates: tuple[CandidateFacts, ...]  # every candidate of the run, by pk
    set_aside: tuple[SetAsideFacts, ...]  # dropped at mining, in subquestion order
    gaps: dict[str, GapFacts]  # subquestion key -> evidence gap
    contested: tuple[ContestedFacts, ...]
    filed_under: dict[str, list[str]]
    wording: GapWording
    diff: RunDiffRecord | None = None
    audited: AuditedReport | None = None  # an audit run's audited report, read once

    @property
    def question(self) -> str:
        return self.plan.question

    @property
    def subquestions(self) -> tuple[tuple[str, str], ...]:
        return self.plan.enabled_subquestions()

    def synthesize(self, llm: LLMClient | None) -> Synthesis:
        """The pure synthesis step over the approved capsules, the bottom line included,
        every sentence then judged by the semantic check (``research.pipeline.report_check``)."""
        return synthesize(
            list(self.capsules),
            llm=llm,
            question=self.question,
            subquestions=self.subquestions,
            check=report_check.from_settings(),
        )

    def document_inputs(
        self,
        synthesis: Synthesis,
        *,
        version: int,
        created_by: str,
        created_at: datetime,
        ends_in: str = "",
    ) -> DocumentInputs:
        used = {code: self.claims[code] for code in synthesis.labels}
        return DocumentInputs(
            plan=self.plan,
            run=self.run,
            version=version,
            synthesis=synthesis,
            claims=used,
            quotes=self.quotes,
            excluded=[
                ExcludedClaim(claim, self.reasons[claim.code])
                for claim in self.run_claims
                if claim.code not in used
            ],
            decisions=list(self.decisions),
            diff=self.diff,
            created_by=created_by,
            created_at=created_at,
            set_aside=self.set_aside,
            withheld=withheld_from(self.run_claims, self.candidates, self.decisions, set(used)),
            ends_in=ends_in,
            audited=self.audited,
            run_claims=self.run_claims,
            gaps=self.gaps,
            contested=self.contested,
            filed_under=self.filed_under,
            wording=self.wording,
        )


def load_report_inputs(run: Run) -> ReportInputs:
    """1. the gate must be open; 2. the approved claims and their cited quotes, each
    quote re-checked against its snapshot (refused when one no longer matches, or when no
    approved claim has a supporting quote); 3. everything else the document states."""
    gate = gate_status(run)
    if not gate.open:
        raise ReportRefused(f"The review gate is closed: {gate.reason}")
    capsules = tuple(approved_capsules(run))  # read once
    claims, quotes = _approved(capsules)
    problems = [p for code, claim in claims.items() for p in quote_problems(claim, quotes[code])]
    if problems:
        raise ReportRefused("Evidence changed since review: " + "; ".join(problems))
    if not any(quotes.values()):
        raise ReportRefused("No approved claim has a supporting quote to cite.")
    plan = plan_facts(run.plan_version)
    sources = [q.source for qs in quotes.values() for q in qs]
    rows = list(Claim.objects.filter(run=run).select_related("subquestion").order_by("pk"))
    decisions = list(run_decisions(run))
    latest = {d.claim_id: d for d in decisions}
    candidates = _candidates(run)
    return ReportInputs(
        plan=plan,
        run=run_facts(run, sources),
        capsules=capsules,
        claims=claims,
        quotes=quotes,
        run_claims=tuple(claim_facts(c) for c in rows),
        reasons={str(c.code): exclusion_reasons(c, latest.get(c.pk)) for c in rows},
        decisions=tuple(decision_facts(d) for d in decisions),
        candidates=candidates,
        set_aside=set_aside_facts(run),
        gaps=evidence_gaps(run),
        contested=contested_pairs(run),
        filed_under=filed_under(run),
        wording=gap_wording(plan.question),
        diff=run_diff_record(run),
        audited=audit_of(run),
    )


# --- approved claims and their quotes ---------------------------------------------------


def _approved(
    capsules: Sequence[Capsule],
) -> tuple[dict[str, ClaimFacts], dict[str, list[CitedQuote]]]:
    """The approved claims as records, with the quotes their capsules cite (each span with
    every evidence link behind it, for Appendix B)."""
    codes = [capsule.code for capsule in capsules]
    rows = (
        Claim.objects.filter(code__in=codes)
        .select_related("subquestion")
        .prefetch_related(
            "evidence__passage",
            "evidence__snapshot__source__profile",
            "evidence__votes",
            Prefetch(
                "decisions",
                queryset=ReviewDecision.objects.select_related("reviewer", "carried_from"),
            ),
        )
    )
    by_code = {str(claim.code): claim for claim in rows}
    cache = _SourceCache()
    claims = {
        code: claim_facts(by_code[code], cache, with_evidence=True)
        for code in codes
        if code in by_code
    }
    quotes = {
        capsule.code: _cited(capsule, claims[capsule.code])
        for capsule in capsules
        if capsule.code in claims
    }
    return claims, quotes


def _cited(capsule: Capsule, claim: ClaimFacts) -> list[CitedQuote]:
    links = {link.pk: link for link in claim.evidence}
    quotes = []
    for evidence in capsule.evidence:
        span = tuple(links[pk] for pk in evidence.link_ids)
        quotes.append(
            CitedQuote(
                snapshot=span[0].snapshot,
                quote=evidence.quote,
                quote_start=evidence.quote_start,
                quote_end=evidence.quote_end,
                links=span,
            )
        )
    return quotes


class _SourceCache:
    """One record per source and snapshot, however many links quote them."""

    def __init__(self) -> None:
        self.sources: dict[int, SourceFacts] = {}
        self.snapshots: dict[int, SnapshotFacts] = {}

    def source(self, source: Source) -> SourceFacts:
        if source.pk not in self.sources:
            self.sources[source.pk] = source_facts(source)
        return self.sources[source.pk]

    def snapshot(self, snapshot: Snapshot) -> SnapshotFacts:
        if snapshot.pk not in self.snapshots:
            self.snapshots[snapshot.pk] = SnapshotFacts(
                code=str(snapshot.code),
                text=snapshot.text,
                text_sha256=snapshot.text_sha256,
                fetched_at=snapshot.fetched_at,
                source=self.source(snapshot.source),
            )
        return self.snapshots[snapshot.pk]


def source_facts(source: Source) -> SourceFacts:
    profile = getattr(source, "profile", None)  # one-to-one: absent until mining wrote it
    return SourceFacts(
        pk=source.pk,
        canonical_id=source.canonical_id,
        title=source.title,
        url=source.url,
        doi=source.doi,
        arxiv_id=source.arxiv_id,
        publisher=source.publisher,
        authors=tuple(source.authors or ()),
        source_type=source.source_type,
        published_date=source.published_date,
        cluster=source.cluster,
        metadata=source.metadata or {},
        profile=ProfileFacts(
            design=profile.design,
            population=profile.population,
            humans=profile.humans,
            year=profile.year,
        )
        if profile is not None
        else None,
    )


def link_facts(link: EvidenceLink, cache: _SourceCache) -> LinkFacts:
    passage = link.passage
    return LinkFacts(
        pk=link.pk,
        relation=link.relation,
        quote=link.quote,
        quote_start=link.quote_start,
        quote_end=link.quote_end,
        score=link.score,
        is_anchor=link.is_anchor,
        pool=link.pool,
        passage_fingerprint=link.passage_fingerprint,
        snapshot_pk=link.snapshot_id,
        snapshot=cache.snapshot(link.snapshot),
        passage=PassageFacts(
            kind=passage.kind,
            start=passage.start,
            end=passage.end,
            text=passage.text,
            fingerprint=passage.fingerprint,
        ),
        votes=tuple(
            VoteFacts(v.family, v.verdict, v.score, v.valid, v.shadow) for v in link.votes.all()
        ),
    )


def claim_facts(
    claim: Claim, cache: _SourceCache | None = None, *, with_evidence: bool = False
) -> ClaimFacts:
    """A claim as a record; ``with_evidence`` (a reported claim, its relations prefetched):
    its links, decisions and why an approval is marked."""
    sub = claim.subquestion
    cache = cache or _SourceCache()
    decisions = (
        sorted(claim.decisions.all(), key=lambda d: (d.created_at, d.pk)) if with_evidence else []
    )
    return ClaimFacts(
        code=str(claim.code),
        text=claim.text,
        fingerprint=claim.fingerprint,
        status=claim.status,
        review_state=claim.review_state,
        disposition=claim.disposition,
        claim_type=claim.claim_type,
        subquestion=sub.key if sub else "",
        subquestion_text=sub.text if sub else "",
        subquestion_position=sub.position if sub else 0,
        allowed_scope=claim.allowed_scope,
        limitations=claim.limitations,
        confidence=claim.confidence,
        prohibited_overstatements=tuple(claim.prohibited_overstatements or ()),
        evidence=tuple(link_facts(link, cache) for link in claim.evidence.all())
        if with_evidence
        else (),
        decisions=tuple(decision_facts(d) for d in decisions),
        unsupported=unsupported_reason(claim) if with_evidence else "",
    )


def decision_facts(decision: ReviewDecision) -> DecisionFacts:
    carried = getattr(decision, "carried_from", None)
    return DecisionFacts(
        pk=decision.pk,
        claim_code=str(decision.claim.code),
        claim_text=decision.claim.text,
        created_at=decision.created_at,
        reviewer=decision.reviewer.get_username(),
        action=decision.action,
        claim_version=decision.claim_version,
        reason_code=decision.reason_code,
        reason=decision.reason,
        text_before=decision.text_before,
        text_after=decision.text_after,
        override=decision.override,
        verdict_at_decision=decision.verdict_at_decision,
        carried_from=str(carried.code) if carried is not None else "",
    )


# --- excluded claims --------------------------------------------------------------------


def exclusion_reasons(claim: Claim, last: ReviewDecision | None) -> list[str]:
    """Why a report that does not state this claim leaves it out."""
    reasons = []
    if claim.status != Verdict.PASS:
        why = f": {claim.rationale}" if claim.rationale else ""
        reasons.append(f"verification {claim.get_status_display()}{why}")
    if claim.review_state == ReviewState.REJECTED and last is not None:
        detail = " — ".join(p for p in (last.reason_code, last.reason) if p)
        reasons.append(f"rejected by {last.reviewer.get_username()}: {detail or 'no reason'}")
    elif claim.review_state == ReviewState.UNREVIEWED:
        reasons.append("not reviewed before the report was built")
    else:
        reasons.append(left_out_reason(claim))
    # A claim's "dropped" disposition is a reviewer's rejection (mining drops are
    # candidates, listed apart): the line above already says who rejected it and why.
    rejected = claim.review_state == ReviewState.REJECTED and last is not None
    if claim.disposition_reason and not rejected:
        reasons.append(f"{claim.disposition}: {claim.disposition_reason}")
    return reasons


# --- the plan and the run ---------------------------------------------------------------


def plan_facts(version: PlanVersion) -> PlanFacts:
    """The plan version, its content parsed once (``research.pipeline.records.parse_plan``)."""
    plan = version.plan
    content = parse_plan(version.content)
    return PlanFacts(
        code=str(plan.code),
        question=plan.question,
        scope=plan.scope,
        constraints=plan.constraints or {},
        version=version.number,
        version_hash=version.content_hash,
        subquestions=tuple(
            SubquestionFacts(
                key=sub.key,
                text=sub.text,
                dimension=sub.dimension,
                enabled=sub.enabled,
                queries=tuple(
                    QueryFacts(q.key, q.text, q.query_class, sub.enabled and q.enabled)
                    for q in sub.queries
                ),
            )
            for sub in content.subquestions
        ),
    )


def run_facts(run: Run, sources: Sequence[SourceFacts] = ()) -> RunFacts:
    checkpoints = run.checkpoints.order_by("started_at", "pk")
    return RunFacts(
        code=str(run.code),
        state=run.state,
        config=run.config,
        config_hash=run.config_hash,
        counters=run.counters,
        started_at=run.started_at,
        finished_at=run.finished_at,
        checkpoints=tuple(
            CheckpointFacts(cp.stage, cp.round, cp.status, cp.notes, cp.label, cp.counters)
            for cp in checkpoints
        ),
        libraries=library_names(run),
        source_libraries=source_libraries(run, sources),
    )


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


def source_libraries(run: Run, sources: Iterable[SourceFacts]) -> dict[int, str]:
    """The name of the library each source was found in (one query): the run's own
    library when the source is in it, else the first of its libraries by name."""
    own = str((run.config or {}).get("library") or "")
    pks = sorted({s.pk for s in sources})
    if not pks:
        return {}
    rows = Library.objects.filter(sources__in=pks).values_list("sources__pk", "code", "name")
    found: dict[int, str] = {}
    for pk, _code, name in sorted(rows, key=lambda r: (str(r[1]) != own, r[2], str(r[1]))):
        found.setdefault(pk, name)
    return found


def gap_wording(question: str) -> GapWording:
    """The planner's reading of the question, as a gap row words what would answer it."""
    shape = analyze_question(question)
    register = field_register(question)
    return GapWording(
        subject=shape.subject,
        outcome=shape.outcome,
        population=shape.population,
        other=shape.other,
        studies=register.studies,
        designs=register.designs,
        variant_nouns=register.variant_nouns,
        compared_with=register.compared_with,
        origins=register.origins,
    )


# --- candidates, gaps, contested pairs --------------------------------------------------


def _candidates(run: Run) -> tuple[CandidateFacts, ...]:
    rows = Candidate.objects.filter(run=run).order_by("pk")
    return tuple(
        CandidateFacts(text, fingerprint, state, str(code) if code else "")
        for text, fingerprint, state, code in rows.values_list(
            "text", "fingerprint", "state", "claim__code"
        )
    )


def set_aside_facts(run: Run) -> tuple[SetAsideFacts, ...]:
    """The candidates mining dropped before verification, in subquestion order."""
    rows = (
        Candidate.objects.filter(run=run, state=CandidateState.DROPPED)
        .select_related("subquestion", "snapshot__source")
        .defer("snapshot__text", "snapshot__raw", "snapshot__http_headers")
        .order_by("subquestion__position", "subquestion__key", "pk")
    )
    return tuple(
        SetAsideFacts(
            fingerprint=c.fingerprint,
            subquestion=c.subquestion.key if c.subquestion else "",
            claim_type=c.claim_type,
            reason=c.reason,
            canonical_id=c.snapshot.source.canonical_id if c.snapshot else "",
            snapshot_sha256=c.snapshot.text_sha256 if c.snapshot else "",
            quote_start=c.quote_start,
            quote_end=c.quote_end,
        )
        for c in rows
    )


def filed_under(run: Run) -> dict[str, list[str]]:
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


def evidence_gaps(run: Run) -> dict[str, GapFacts]:
    rows = EvidenceGap.objects.filter(run=run).select_related("subquestion")
    return {
        row.subquestion.key: GapFacts(row.passages, row.candidates, row.best_relevance)
        for row in rows
        if row.subquestion is not None
    }


def contested_pairs(run: Run) -> tuple[ContestedFacts, ...]:
    pairs = ContestedPair.objects.filter(run=run).select_related("claim", "other")
    return tuple(
        ContestedFacts(
            claim_code=str(pair.claim.code),
            claim_text=pair.claim.text,
            other_code=str(pair.other.code),
            other_text=pair.other.text,
            reason=pair.reason,
        )
        for pair in pairs.order_by("pk")
    )


# --- withheld texts ---------------------------------------------------------------------


def withheld_from(
    claims: Iterable[ClaimFacts],
    candidates: Iterable[CandidateFacts],
    decisions: Iterable[DecisionFacts],
    approved_codes: set[str],
) -> list[str]:
    """Every claim text of the run a report may not print, longest first.

    That is the text of each claim outside the report, every text a decision recorded for
    it, the pre-narrowing text of reported claims (a broader scope than approved), and
    the wording of every candidate that did not become a reported claim: set aside at
    mining, or kept / merged into a claim outside the report.
    """
    claims = list(claims)
    texts = {c.text for c in claims if c.code not in approved_codes}
    reported = {c.fingerprint for c in claims if c.code in approved_codes}
    texts.update(
        c.text
        for c in candidates
        if (
            c.state == CandidateState.DROPPED
            or not c.claim_code
            or c.claim_code not in approved_codes
        )
        and c.fingerprint not in reported
        and len(content_words(c.text)) >= MIN_WITHHELD_CONTENT_WORDS
    )
    for decision in decisions:
        if decision.claim_code in approved_codes:
            if decision.text_before != decision.claim_text:
                texts.add(decision.text_before)
        else:
            texts.update((decision.text_before, decision.text_after))
    return sorted((t for t in texts if t.strip()), key=lambda t: (-len(t), t))


def withheld_texts(run: Run, approved_codes: set[str]) -> list[str]:
    """The withheld wording of a run for a report stating ``approved_codes`` (an export's
    last scan reads it from the ledger as it stands)."""
    rows = Claim.objects.filter(run=run).select_related("subquestion").order_by("pk")
    return withheld_from(
        (claim_facts(c) for c in rows),
        _candidates(run),
        (decision_facts(d) for d in run_decisions(run)),
        approved_codes,
    )
