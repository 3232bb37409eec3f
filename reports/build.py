"""Reports: build a version from approved capsules, re-check integrity, export every format.

- ``check_request_report(user, run)``: the web's "Build report": moves the run to
  ``synthesizing`` and queues the stage (``research.stages.synthesize``) that a worker
  runs; nothing is built inside the request.
- ``load_report_inputs(run)`` → ``synthesize`` (pure) → ``do_save_report(...)``: the
  stage's load, step and save. ``do_build_report(run, user)`` chains them in one call
  (the ``runplan`` command, tests, benchmarks).
- ``integrity_problems(report)``: re-checks, from the database, every quote at its
  offsets, every snapshot and passage hash, every evidence link (by its own id), every
  claim's text and fingerprint, and that every reported claim is still approved. Each
  problem names the claim.
- ``render_checked(report, fmt)`` / ``do_export_report(report, fmt, user)``: refused
  (``ExportRefused``) on any integrity problem, or if any variant of a withheld text (an
  excluded claim's, or a candidate's that mining set aside) would appear in the output.
"""

from __future__ import annotations

import hashlib
import html as htmllib
import io
import json
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Max
from django.http import Http404
from django.utils import timezone

from ledger.models import Claim, EvidenceLink, ReviewState, Snapshot, Verdict
from research.models import Plan, Run
from research.pipeline.claims.facets import facets
from research.pipeline.synthesize import Capsule, CapsuleEvidence, Synthesis, synthesize
from research.providers.llm import LLMClient
from review import services as review_services
from review.audits import audit_of
from review.exports import bundle, citations
from review.exports.answer import source_design, source_studied, untraceable_numbers
from review.exports.audited import AuditedReport
from review.exports.audited import render_html as render_audited_html
from review.exports.audited import render_markdown as render_audited_markdown
from review.exports.document import (
    CitedQuote,
    DocumentInputs,
    build_document,
    cited_quotes,
    leak_matcher,
    set_aside_candidates,
    sha256_text,
    withheld_texts,
)
from review.exports.html import render_html
from review.exports.markdown import render_markdown
from review.exports.pdf import render_pdf
from review.exports.records import (
    ClaimRow,
    EvidenceRow,
    ReportDocument,
    UnsupportedDocument,
)
from review.models import Export, Report, ReviewDecision
from review.preview import left_out_reason, unsupported_reason
from review.rundiffs import run_diff_record
from review.signing import instance_private_key

FORMATS: dict[str, tuple[str, str]] = {
    "md": ("text/markdown; charset=utf-8", "md"),
    "html": ("text/html; charset=utf-8", "html"),
    "pdf": ("application/pdf", "pdf"),
    "zip": ("application/zip", "zip"),
    "bib": ("application/x-bibtex; charset=utf-8", "bib"),
    "csl": ("application/vnd.citationstyles.csl+json; charset=utf-8", "csl.json"),
}


class ReportRefused(Exception):
    """No report now: the gate is closed or nothing approved can be cited."""


class ExportRefused(Exception):
    """The evidence no longer matches what the report was built on."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("export refused: " + "; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ExportFile:
    fmt: str
    filename: str
    content_type: str
    data: bytes


# --- access ---------------------------------------------------------------------------


def can_build_report(user: Any, plan: Plan) -> bool:
    """The plan's owner and its reviewers build reports; read-only members do not."""
    return bool(user.pk == plan.owner_id or review_services.can_decide(user, plan))


def get_report_for_user(user: Any, code: UUID) -> Report:
    report = Report.objects.select_related("run__plan_version__plan").filter(code=code).first()
    if report is None or not report.run.plan_version.plan.is_visible_to(user):
        raise Http404("No such report")
    return report


def run_reports(run: Run) -> list[Report]:
    return list(Report.objects.filter(run=run).order_by("-version"))


class ReportNotFound(Exception):
    """No report or user by that name (the command line); the message says which."""


def find_report(code: str, version: int | None = None) -> Report:
    """A report by its code, or a run's report (latest, or ``version``) by the run's code."""
    try:
        uuid = UUID(code)
    except ValueError as exc:
        raise ReportNotFound(f"{code!r} is not a report or run code (a UUID)") from exc
    report = Report.objects.filter(code=uuid).first()
    if report is not None:
        if version is not None and report.version != version:
            raise ReportNotFound(f"report {code} is version {report.version}, not {version}")
        return report
    found = Report.objects.filter(run__code=uuid).order_by("-version")
    report = (found.filter(version=version) if version is not None else found).first()
    if report is None:
        what = f"version {version}" if version is not None else "report"
        raise ReportNotFound(f"no report {code} and no {what} of a run {code}")
    return report


def find_user(username: str) -> Any:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ReportNotFound(f"no user {username!r}")
    return user


# --- requesting (the web) ---------------------------------------------------------------


def check_request_report(user: Any, run: Run, *, enqueue: bool = True) -> Run:
    """Queue the synthesizing stage for a reviewed run; refused while the gate is closed."""
    from research.services.runs import RunRefused, do_start_synthesis

    if not can_build_report(user, run.plan_version.plan):
        raise PermissionDenied("Only the plan's owner or its reviewers build reports.")
    gate = review_services.gate_status(run)
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
        """The pure synthesis step over the approved capsules, the bottom line included."""
        return synthesize(
            self.capsules(), llm=llm, question=self.question, subquestions=self.subquestions
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
    gate = review_services.gate_status(run)
    if not gate.open:
        raise ReportRefused(f"The review gate is closed: {gate.reason}")
    claims = approved_claims(run)
    overridden = {str(c.code) for c in review_services.approved_capsules(run) if c.override}
    # An approved claim without verified support is printed, marked, citing its anchor.
    quotes = {
        code: cited_quotes(
            claim.evidence.all(), override=code in overridden or bool(unsupported_reason(claim))
        )
        for code, claim in claims.items()
    }
    problems = [p for code, claim in claims.items() for p in _quote_problems(claim, quotes[code])]
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
    codes = [str(capsule.code) for capsule in review_services.approved_capsules(run)]
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
    decisions = list(review_services.run_decisions(run))
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


# --- integrity --------------------------------------------------------------------------


def _name(label: str, code: Any, text: str) -> str:
    return f"claim {label + ' ' if label else ''}({code}) “{text[:80]}”"


def _quote_problems(claim: Claim, quotes: list[CitedQuote], label: str = "") -> list[str]:
    name = _name(label, claim.code, claim.text)
    problems = []
    for quote in quotes:
        snapshot = quote.snapshot
        problems += _snapshot_problems(
            name, snapshot, quote.quote, quote.quote_start, quote.quote_end
        )
        for link in quote.links:
            problems += _passage_problems(name, link)
    return problems


def _snapshot_problems(
    name: str, snapshot: Snapshot, quote: str, start: int, end: int
) -> list[str]:
    problems = []
    if sha256_text(snapshot.text) != snapshot.text_sha256:
        problems.append(f"{name}: snapshot {snapshot.text_sha256[:12]} text was altered")
    if snapshot.text[start:end] != quote:
        problems.append(
            f"{name}: quote no longer matches snapshot {snapshot.text_sha256[:12]} "
            f"at [{start}:{end}]"
        )
    return problems


def _passage_problems(name: str, link: EvidenceLink) -> list[str]:
    passage = link.passage
    text = link.snapshot.text
    if (
        text[passage.start : passage.end] != passage.text
        or link.passage_fingerprint != passage.fingerprint
    ):
        span = f"{passage.kind} [{passage.start}:{passage.end}]"
        return [f"{name}: passage fingerprint changed ({span})"]
    return []


def report_document(report: Report) -> ReportDocument:
    """The frozen document of a report version (parsed at the JSON boundary)."""
    return ReportDocument.from_json(report.outline)


def integrity_problems(report: Report) -> list[str]:
    """Re-check the frozen report against the ledger as it is now."""
    try:
        document = report_document(report)
    except UnsupportedDocument as exc:
        return [str(exc)]
    problems = []
    if sha256_text(report.markdown) != report.content_hash:
        problems.append("the report text no longer matches its content hash")
    approved = {str(c.code) for c in review_services.approved_capsules(report.run)}
    rows = Claim.objects.filter(code__in=[c.code for c in document.claims])
    current = {
        str(c.code): c for c in rows.prefetch_related("evidence__passage", "evidence__snapshot")
    }
    for frozen in document.claims:
        evidence = [row for row in document.appendix_b if row.claim_code == frozen.code]
        problems += _frozen_claim_problems(frozen, current.get(frozen.code), approved, evidence)
    return problems


def _frozen_claim_problems(
    frozen: ClaimRow, claim: Claim | None, approved: set[str], evidence: list[EvidenceRow]
) -> list[str]:
    name = _name(frozen.label, frozen.code, frozen.text)
    if claim is None:
        return [f"{name}: no longer in the ledger"]
    problems = []
    if claim.text != frozen.text or claim.fingerprint != frozen.fingerprint:
        problems.append(f"{name}: text or fingerprint changed since the report was built")
    if frozen.code not in approved:
        problems.append(f"{name}: no longer approved")
    links = {link.pk: link for link in claim.evidence.all()}
    for row in evidence:
        found = [links.get(p.link_id) for p in row.passages]
        moved = [
            p.link_id
            for p, link in zip(row.passages, found, strict=True)
            if link is None or _link_moved(link, row, p.passage_fingerprint)
        ]
        if moved:
            problems.append(
                f"{name}: evidence {row.label} changed in the ledger (link "
                + ", ".join(str(pk) for pk in moved)
                + ")"
            )
            continue
        link = found[0]
        assert link is not None
        problems += _snapshot_problems(
            name, link.snapshot, row.quote, row.quote_start, row.quote_end
        )
        for current in found:
            assert current is not None
            problems += _passage_problems(name, current)
    return problems


def _link_moved(link: EvidenceLink, row: EvidenceRow, passage_fingerprint: str) -> bool:
    return bool(
        link.quote != row.quote
        or link.quote_start != row.quote_start
        or link.quote_end != row.quote_end
        or link.snapshot.text_sha256 != row.snapshot_sha256
        or link.passage_fingerprint != passage_fingerprint
    )


# --- exporting ------------------------------------------------------------------------


class ExportBusy(Exception):
    """The user already has as many PDF exports printing as they may; nothing was exported."""


# Postgres advisory-lock keys of the per-user PDF slots: (this + slot number, user id).
PDF_LOCK_NAMESPACE = 0x45425044  # "EBPD"


def do_export_report(report: Report, fmt: str, user: Any) -> ExportFile:
    """Render one format after re-checking integrity and scanning it; record the export.

    A PDF holds one of its user's printing slots while it prints (``ExportBusy`` when
    none is free), so one user cannot take every page of the printer.
    """
    with _printing_slot(fmt, user):
        export = render_checked(report, fmt)
    Export.objects.create(
        report=report,
        format=fmt,
        content_hash=hashlib.sha256(export.data).hexdigest(),
        size=len(export.data),
        created_by=user,
    )
    return export


@contextmanager
def _printing_slot(fmt: str, user: Any) -> Iterator[None]:
    """One of the user's ``PDF_MAX_PER_USER`` PDF slots for the block, or ``ExportBusy``.

    The slots are Postgres advisory locks: they count across every web process and the
    command line, and a process that dies releases them with its connection.
    """
    if fmt != "pdf" or user is None or user.pk is None:
        yield
        return
    limit = settings.PDF_MAX_PER_USER
    key = _try_pdf_lock(limit, user.pk)
    if key is None:
        exports = "a PDF export" if limit == 1 else f"{limit} PDF exports"
        raise ExportBusy(
            f"You already have {exports} printing: wait until it is downloaded, then export again"
        )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s::int4, %s::int4)", key)


def _try_pdf_lock(limit: int, user_pk: int) -> tuple[int, int] | None:
    with connection.cursor() as cursor:
        for slot in range(limit):
            key = (PDF_LOCK_NAMESPACE + slot, user_pk)
            cursor.execute("SELECT pg_try_advisory_lock(%s::int4, %s::int4)", key)
            if cursor.fetchone()[0]:
                return key
    return None


def render_checked(report: Report, fmt: str) -> ExportFile:
    """One format's bytes, refused on any integrity problem or withheld-text leak."""
    if fmt not in FORMATS:
        raise Http404("No such export format")
    problems = integrity_problems(report)
    if problems:
        raise ExportRefused(problems)
    document = report_document(report)
    data = render_format(report, document, fmt)
    matcher = leak_matcher(document, withheld_texts(report.run, set(report.claim_codes)))
    for where, text in searchable(document, fmt, data):
        if matcher.first_leak(text) is not None:
            raise ExportRefused(
                [
                    f"the text of an excluded claim or candidate would appear in the {fmt} "
                    f"export ({where})"
                ]
            )
    content_type, ext = FORMATS[fmt]
    filename = f"report-{report.run.code}-v{report.version}.{ext}"
    return ExportFile(fmt=fmt, filename=filename, content_type=content_type, data=data)


def render_format(report: Report, document: ReportDocument, fmt: str) -> bytes:
    if fmt == "md":
        return report.markdown.encode()
    if fmt == "html":
        return render_html(document).encode()
    if fmt == "pdf":
        return render_pdf(render_html(document), dated=report.created_at)
    if fmt == "bib":
        return citations.bibtex(document.bibliography).encode()
    if fmt == "csl":
        return citations.csl_json(document.bibliography).encode()
    return _bundle(report, document)


# --- the withheld-text scan -------------------------------------------------------------

_TAG = re.compile(r"<[^>]*>")


def visible_html(markup: str) -> str:
    """The words an HTML page shows: tags dropped, entities decoded (``&#x27;`` → ``'``)."""
    return htmllib.unescape(_TAG.sub(" ", markup))


def json_strings(data: Any) -> list[str]:
    """Every string (keys included) of a JSON value, unescaped."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in (k, *json_strings(v))]
    if isinstance(data, list):
        return [s for item in data for s in json_strings(item)]
    return []


def searchable(document: ReportDocument, fmt: str, data: bytes) -> list[tuple[str, str]]:
    """(where, text) pairs an export shows, for the withheld-text scan.

    A PDF is Chromium's print of the HTML export, so its HTML is scanned (the same words,
    without a PDF text extraction); HTML is scanned as its visible text, JSON as its
    unescaped strings; a bundle member by member, except the snapshot texts (what the
    sources say, needed to re-check quotes offline) and an audit's audited report (what the
    audited engine wrote, kept whole on purpose: every sentence is shown with its mark,
    a rejected one marked dropped; the report itself is scanned like any other).
    """
    if fmt == "pdf":
        return [("pdf", visible_html(render_html(document)))]
    if fmt == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return [
                (name, _member_text(name, archive.read(name)))
                for name in archive.namelist()
                if not name.startswith(("snapshots/", "audited/"))
            ]
    text = data.decode("utf-8", "replace")
    if fmt == "html":
        return [("html", visible_html(text))]
    if fmt == "csl":
        return [("csl", "\n".join(json_strings(json.loads(text))))]
    return [(fmt, text)]


def _member_text(name: str, data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if name.endswith(".json"):
        return "\n".join(json_strings(json.loads(text)))
    if name.endswith(".html"):
        return visible_html(text)
    return text


# --- the bundle -------------------------------------------------------------------------


def _bundle(report: Report, document: ReportDocument) -> bytes:
    run = report.run
    plan_version = run.plan_version
    files = {
        "report/report.md": report.markdown.encode(),
        "report/report.html": render_html(document).encode(),
        "report/report.json": bundle.to_json(document.to_json()),
        "plan_version.json": bundle.to_json(
            {
                "plan_code": str(plan_version.plan.code),
                "question": plan_version.plan.question,
                "number": plan_version.number,
                "content": plan_version.content,
                "content_hash": plan_version.content_hash,
            }
        ),
        "run.json": bundle.to_json(
            {
                "code": str(run.code),
                "config": run.config,
                "config_hash": run.config_hash,
                "budgets": run.budgets,
                "stages": [s.model_dump(mode="json") for s in document.appendix_d.stages],
            }
        ),
        "claims.json": bundle.to_json(bundle.bundle_claims(document).model_dump(mode="json")),
        "evidence.json": bundle.to_json([r.model_dump(mode="json") for r in document.appendix_b]),
        "decisions.json": bundle.to_json([r.model_dump(mode="json") for r in document.appendix_c]),
        "sources.bib": citations.bibtex(document.bibliography).encode(),
        "sources.csl.json": citations.csl_json(document.bibliography).encode(),
    }
    if report.audited:  # an audit run: the imported report, every sentence marked
        audited = AuditedReport.from_json(report.audited)
        files["audited/report.md"] = render_audited_markdown(audited).encode()
        files["audited/report.html"] = render_audited_html(audited).encode()
    return bundle.build_bundle(
        files=files,
        snapshots=_bundle_snapshots(document),
        report={
            "code": str(report.code),
            "version": report.version,
            "title": document.header.title,
            "content_hash": report.content_hash,
            "synthesizer": report.synthesizer,
        },
        key=instance_private_key(),
    )


def _bundle_snapshots(document: ReportDocument) -> list[dict[str, Any]]:
    codes = sorted({row.snapshot_code for row in document.appendix_b})
    rows = Snapshot.objects.filter(code__in=codes).select_related("source").order_by("code")
    return [
        {
            "code": str(s.code),
            "canonical_id": s.source.canonical_id,
            "text_sha256": s.text_sha256,
            "raw_sha256": s.raw_sha256,
            "fetched_at": s.fetched_at.isoformat(),
            "content_type": s.content_type,
            "extractor": s.extractor,
            "text": s.text,
        }
        for s in rows
    ]
