"""Building a report version from a reviewed run's approved capsules.

- ``check_request_report(user, run)``: the web's "Build report": moves the run to
  ``synthesizing`` and queues the stage (``research.stages.synthesize``) that a worker
  runs; nothing is built inside the request.
- ``load_report_inputs(run)`` → ``synthesize`` (pure) → ``do_save_report(...)``: the
  stage's load, step and save. ``do_build_report(run, user)`` chains them in one call
  (the ``runplan`` command, tests, benchmarks).

Who may build is ``reports.access``; the checks a built version passes before any export
are ``reports.integrity``; exporting it is ``reports.export``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ledger.models import Claim, ReviewState, Verdict
from reports.access import can_build_report
from reports.exports.answer import source_design, source_studied, untraceable_numbers
from reports.exports.document import (
    CitedQuote,
    DocumentInputs,
    build_document,
    cited_quotes,
    set_aside_candidates,
    sha256_text,
    withheld_texts,
)
from reports.exports.markdown import render_markdown
from reports.integrity import quote_problems
from reports.models import Report
from reports.preview import left_out_reason, unsupported_reason
from research.models import Run
from research.pipeline import report_check
from research.pipeline.claims.facets import facets
from research.pipeline.synthesize import Capsule, CapsuleEvidence, Synthesis, synthesize
from research.providers.llm import LLMClient
from review.audits import audit_of
from review.models import ReviewDecision
from review.readers import run_decisions
from review.rundiffs import run_diff_record
from review.services.capsules import approved_capsules
from review.services.gate import gate_status


class ReportRefused(Exception):
    """No report now: the gate is closed or nothing approved can be cited."""


# --- requesting (the web) ---------------------------------------------------------------


def check_request_report(user: Any, run: Run, *, enqueue: bool = True) -> Run:
    """Queue the synthesizing stage for a reviewed run; refused while the gate is closed."""
    from research.services.runs import RunRefused, do_start_synthesis

    if not can_build_report(user, run.plan_version.plan):
        raise PermissionDenied("Only the plan's owner or its reviewers build reports.")
    gate = gate_status(run)
    if not gate.open:
        raise ReportRefused(f"The review gate is closed: {gate.reason}")
    try:
        return do_start_synthesis(run, user, enqueue=enqueue)
    except RunRefused as exc:
        raise ReportRefused(str(exc)) from exc


# --- building ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportInputs:
    """What synthesis may read (approved capsules only) and what the document needs."""

    claims: dict[str, Claim]  # approved claims by code, in review order
    quotes: dict[str, list[CitedQuote]]  # their cited quotes
    question: str = ""
    subquestions: tuple[tuple[str, str], ...] = ()  # enabled (key, text), plan order

    def capsules(self) -> list[Capsule]:
        return [to_capsule(self.claims[code], self.quotes[code]) for code in self.claims]

    def synthesize(self, llm: LLMClient | None) -> Synthesis:
        """The pure synthesis step over the approved capsules, the bottom line included,
        every sentence then judged by the semantic check (``research.pipeline.report_check``)."""
        return synthesize(
            self.capsules(),
            llm=llm,
            question=self.question,
            subquestions=self.subquestions,
            check=report_check.from_settings(),
        )


def check_build_report(user: Any, run: Run) -> Report:
    if not can_build_report(user, run.plan_version.plan):
        raise PermissionDenied("Only the plan's owner or its reviewers build reports.")
    return do_build_report(run, user)


def do_build_report(run: Run, user: Any) -> Report:
    """1. load (gate open, approved capsules, evidence intact); 2. synthesize; 3. save."""
    inputs = load_report_inputs(run)
    synthesis = inputs.synthesize(LLMClient.from_settings())
    return do_save_report(prepare_report(run, user, synthesis, inputs))


def load_report_inputs(run: Run) -> ReportInputs:
    """The approved claims and their cited quotes; refused when the gate is closed, a
    quote no longer matches, or no approved claim has a supporting quote."""
    gate = gate_status(run)
    if not gate.open:
        raise ReportRefused(f"The review gate is closed: {gate.reason}")
    claims = approved_claims(run)
    overridden = {str(c.code) for c in approved_capsules(run) if c.override}
    # An approved claim without verified support is printed, marked, citing its anchor.
    quotes = {
        code: cited_quotes(
            claim.evidence.all(), override=code in overridden or bool(unsupported_reason(claim))
        )
        for code, claim in claims.items()
    }
    problems = [p for code, claim in claims.items() for p in quote_problems(claim, quotes[code])]
    if problems:
        raise ReportRefused("Evidence changed since review: " + "; ".join(problems))
    if not any(quotes.values()):
        raise ReportRefused("No approved claim has a supporting quote to cite.")
    content = run.plan_version.content
    subquestions = tuple(
        (str(sub.get("key", "")), str(sub.get("text", "")))
        for sub in content.get("subquestions", [])
        if sub.get("enabled", True) is not False
    )
    question = run.plan_version.plan.question
    return ReportInputs(claims=claims, quotes=quotes, question=question, subquestions=subquestions)


def approved_claims(run: Run) -> dict[str, Claim]:
    """The run's approved claims (per review.services), in review order."""
    codes = [str(capsule.code) for capsule in approved_capsules(run)]
    rows = (
        Claim.objects.filter(code__in=codes)
        .select_related("subquestion")
        .prefetch_related(
            "evidence__passage",
            "evidence__snapshot__source__profile",
            "evidence__votes",
            "decisions__reviewer",
        )
    )
    by_code = {str(claim.code): claim for claim in rows}
    return {code: by_code[code] for code in codes if code in by_code}


def to_capsule(claim: Claim, quotes: list[CitedQuote]) -> Capsule:
    sub = claim.subquestion
    stated = facets(claim.text)
    return Capsule(
        code=str(claim.code),
        text=claim.text,
        fingerprint=claim.fingerprint,
        subquestion_key=sub.key if sub else "",
        subquestion_text=sub.text if sub else "",
        subquestion_position=sub.position if sub else 0,
        allowed_scope=claim.allowed_scope,
        prohibited_overstatements=tuple(claim.prohibited_overstatements or ()),
        limitations=claim.limitations,
        confidence=claim.confidence,
        claim_type=claim.claim_type,
        evidence=tuple(
            CapsuleEvidence(
                source_key=quote.source.canonical_id,
                quote=quote.quote,
                quote_start=quote.quote_start,
                quote_end=quote.quote_end,
                snapshot_sha256=quote.snapshot.text_sha256,
                passage_fingerprint=quote.links[0].passage_fingerprint,
                cluster=quote.source.cluster,
                design=source_design(quote.source),
                studied=source_studied(quote.source),
            )
            for quote in quotes
        ),
        # Read from the approved wording (a narrowed claim says less than it was mined as).
        direction=stated.direction,
        effect=stated.effect,
        marked=bool(unsupported_reason(claim)),
    )


def prepare_report(
    run: Run, user: Any, synthesis: Synthesis, inputs: ReportInputs, *, ends_in: str = ""
) -> Report:
    """The next report version, frozen but not saved yet (``render_checked`` works on it).
    ``ends_in``: the state the run ends in once it is saved (the synthesizing stage's
    "done"), which Appendix D states instead of the state mid-build."""
    used = {code: inputs.claims[code] for code in synthesis.labels}
    decisions = list(run_decisions(run))
    diff = run_diff_record(run)
    version = (Report.objects.filter(run=run).aggregate(v=Max("version"))["v"] or 0) + 1
    created_at = timezone.now()
    audited = audit_of(run)  # read once: the method line and the frozen copy agree
    document = build_document(
        DocumentInputs(
            run=run,
            version=version,
            synthesis=synthesis,
            claims=used,
            quotes=inputs.quotes,
            excluded=excluded_claims(run, set(used), decisions),
            decisions=decisions,
            diff=diff,
            created_by=user.get_username() if user else "",
            created_at=created_at,
            set_aside=set_aside_candidates(run),
            withheld=withheld_texts(run, set(used)),
            ends_in=ends_in,
            audited=audited,
        )
    )
    untraceable = untraceable_numbers(document)
    if untraceable:  # a bug, never a report: every number must trace to approved capsules
        raise ReportRefused("Bottom line not traceable: " + "; ".join(untraceable))
    markdown = render_markdown(document)
    return Report(
        run=run,
        version=version,
        synthesizer=synthesis.synthesizer,
        outline=document.to_json(),
        markdown=markdown,
        content_hash=sha256_text(markdown),
        claim_codes=list(synthesis.labels),
        check_findings=[vars(f) for f in synthesis.findings],
        audited=audited.to_json() if audited else {},
        created_by=user,
        created_at=created_at,
    )


def do_save_report(report: Report) -> Report:
    """Save a prepared version; refused if another build took its number meanwhile."""
    with transaction.atomic():
        Run.objects.select_for_update().get(pk=report.run_id)  # serializes version numbers
        if Report.objects.filter(run=report.run_id, version=report.version).exists():
            raise ReportRefused(
                f"Report version {report.version} was built meanwhile by another request."
            )
        report.save()
    return report


def excluded_claims(
    run: Run, reported: set[str], decisions: list[ReviewDecision]
) -> list[tuple[Claim, list[str]]]:
    """Every claim of the run the report does not state, with the reasons why."""
    latest = {d.claim_id: d for d in decisions}
    claims = Claim.objects.filter(run=run).select_related("subquestion").order_by("pk")
    return [
        (claim, exclusion_reasons(claim, latest.get(claim.pk)))
        for claim in claims
        if str(claim.code) not in reported
    ]


def exclusion_reasons(claim: Claim, last: ReviewDecision | None) -> list[str]:
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
