"""Reports: build a version from approved capsules, re-check integrity, export every format.

- ``do_build_report(run, user)``: refused while the review gate is closed; synthesizes
  from ``review.services.approved_capsules(run)`` only, freezes the report document and
  numbers the version per run.
- ``integrity_problems(report)``: re-checks, from the database, every quote at its
  offsets, every snapshot and passage hash, every claim's text and fingerprint, and that
  every reported claim is still approved. Each problem names the claim.
- ``do_export_report(report, fmt, user)``: refused (``ExportRefused``) on any integrity
  problem, or if a withheld text (an excluded claim's, or a candidate's that mining set
  aside) would appear in the output.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.http import Http404
from django.utils import timezone

from ledger.models import (
    Claim,
    EvidenceLink,
    Relation,
    ReviewState,
    Snapshot,
    Verdict,
)
from research.models import Plan, Run
from research.pipeline.synthesize import Capsule, CapsuleEvidence, Synthesis, synthesize
from research.providers.llm import LLMClient
from review import services as review_services
from review.diff import diff_runs, previous_run
from review.exports import bundle, citations
from review.exports.document import (
    build_document,
    find_withheld,
    set_aside_candidates,
    sha256_text,
    withheld_texts,
)
from review.exports.html import render_html
from review.exports.markdown import render_markdown
from review.exports.pdf import render_pdf
from review.models import Export, Report, ReviewDecision

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


# --- building -------------------------------------------------------------------------


def check_build_report(user: Any, run: Run) -> Report:
    if not can_build_report(user, run.plan_version.plan):
        raise PermissionDenied("Only the plan's owner or its reviewers build reports.")
    return do_build_report(run, user)


def do_build_report(run: Run, user: Any) -> Report:
    """1. gate open; 2. load approved capsules; 3. evidence intact; 4. synthesize;
    5. freeze the document and save the next version."""
    gate = review_services.gate_status(run)
    if not gate.open:
        raise ReportRefused(f"The review gate is closed: {gate.reason}")
    claims, links = approved_claims(run)
    problems = [p for code, claim in claims.items() for p in _claim_problems(claim, links[code])]
    if problems:
        raise ReportRefused("Evidence changed since review: " + "; ".join(problems))
    capsules = [to_capsule(claims[code], links[code]) for code in claims]
    if not any(c.evidence for c in capsules):
        raise ReportRefused("No approved claim has a supporting quote to cite.")
    synthesis = synthesize(capsules, llm=LLMClient.from_settings())
    used = {code: claims[code] for code in synthesis.labels}
    return _save_report(run, user, synthesis, used, links)


def approved_claims(run: Run) -> tuple[dict[str, Claim], dict[str, list[EvidenceLink]]]:
    """The run's approved claims (per review.services) and their supporting links."""
    codes = [capsule.code for capsule in review_services.approved_capsules(run)]
    rows = (
        Claim.objects.filter(code__in=codes)
        .select_related("subquestion")
        .prefetch_related("evidence__passage", "evidence__snapshot__source")
    )
    by_code = {str(claim.code): claim for claim in rows}
    claims = {str(code): by_code[str(code)] for code in codes if str(code) in by_code}
    links = {code: supporting_links(claim) for code, claim in claims.items()}
    return claims, links


def supporting_links(claim: Claim) -> list[EvidenceLink]:
    """Only quotes that support the claim are cited (never background or contradicting)."""
    found = [link for link in claim.evidence.all() if link.relation == Relation.SUPPORTS]
    return sorted(found, key=lambda link: (-(link.score or 0.0), link.pk))


def to_capsule(claim: Claim, links: list[EvidenceLink]) -> Capsule:
    sub = claim.subquestion
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
                source_key=link.snapshot.source.canonical_id,
                quote=link.quote,
                quote_start=link.quote_start,
                quote_end=link.quote_end,
                snapshot_sha256=link.snapshot.text_sha256,
                passage_fingerprint=link.passage_fingerprint,
            )
            for link in links
        ),
    )


def _save_report(
    run: Run,
    user: Any,
    synthesis: Synthesis,
    claims: dict[str, Claim],
    links: dict[str, list[EvidenceLink]],
) -> Report:
    decisions = list(review_services.run_decisions(run))
    earlier = previous_run(run)
    diff = diff_runs(earlier, run) if earlier is not None else None
    with transaction.atomic():
        Run.objects.select_for_update().get(pk=run.pk)  # serializes version numbers
        version = (Report.objects.filter(run=run).aggregate(v=Max("version"))["v"] or 0) + 1
        document = build_document(
            run=run,
            version=version,
            synthesis=synthesis,
            claims=claims,
            links=links,
            excluded=excluded_claims(run, set(claims), decisions),
            decisions=decisions,
            diff=diff,
            created_by=user.get_username() if user else "",
            created_at=timezone.now(),
            set_aside=set_aside_candidates(run),
        )
        markdown = render_markdown(document)
        return Report.objects.create(
            run=run,
            version=version,
            synthesizer=synthesis.synthesizer,
            outline=document,
            markdown=markdown,
            content_hash=sha256_text(markdown),
            claim_codes=list(synthesis.labels),
            check_findings=[vars(f) for f in synthesis.findings],
            created_by=user,
        )


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
    if claim.status in (Verdict.FAIL, Verdict.UNCERTAIN, Verdict.PENDING):
        why = f": {claim.rationale}" if claim.rationale else ""
        reasons.append(f"verification {claim.get_status_display()}{why}")
    if claim.review_state == ReviewState.REJECTED and last is not None:
        detail = " — ".join(p for p in (last.reason_code, last.reason) if p)
        reasons.append(f"rejected by {last.reviewer.get_username()}: {detail or 'no reason'}")
    elif claim.review_state == ReviewState.UNREVIEWED:
        reasons.append("not reviewed before the report was built")
    elif claim.review_state == ReviewState.NARROWED:
        reasons.append("narrowed, awaiting approval of the narrowed text")
    elif claim.review_state == ReviewState.APPROVED:
        reasons.append("approved, but not an approved capsule with a supporting quote")
    # A claim's "dropped" disposition is a reviewer's rejection (mining drops are
    # candidates, listed apart): the line above already says who rejected it and why.
    rejected = claim.review_state == ReviewState.REJECTED and last is not None
    if claim.disposition_reason and not rejected:
        reasons.append(f"{claim.disposition}: {claim.disposition_reason}")
    return reasons


# --- integrity --------------------------------------------------------------------------


def _claim_problems(claim: Claim, links: list[EvidenceLink], label: str = "") -> list[str]:
    name = f"claim {label + ' ' if label else ''}({claim.code}) “{claim.text[:80]}”"
    problems = []
    for link in links:
        snapshot, passage = link.snapshot, link.passage
        if sha256_text(snapshot.text) != snapshot.text_sha256:
            problems.append(f"{name}: snapshot {snapshot.text_sha256[:12]} text was altered")
        if snapshot.text[link.quote_start : link.quote_end] != link.quote:
            problems.append(
                f"{name}: quote no longer matches snapshot {snapshot.text_sha256[:12]} "
                f"at [{link.quote_start}:{link.quote_end}]"
            )
        if (
            snapshot.text[passage.start : passage.end] != passage.text
            or link.passage_fingerprint != passage.fingerprint
        ):
            problems.append(f"{name}: passage fingerprint changed")
    return problems


def integrity_problems(report: Report) -> list[str]:
    """Re-check the frozen report against the ledger as it is now."""
    document = report.outline
    problems = []
    if sha256_text(report.markdown) != report.content_hash:
        problems.append("the report text no longer matches its content hash")
    approved = {str(c.code) for c in review_services.approved_capsules(report.run)}
    rows = Claim.objects.filter(code__in=[c["code"] for c in document["claims"]])
    current = {
        str(c.code): c for c in rows.prefetch_related("evidence__passage", "evidence__snapshot")
    }
    for frozen in document["claims"]:
        problems += _frozen_claim_problems(frozen, current.get(frozen["code"]), approved, document)
    return problems


def _frozen_claim_problems(
    frozen: dict[str, Any], claim: Claim | None, approved: set[str], document: dict[str, Any]
) -> list[str]:
    name = f"claim {frozen['label']} ({frozen['code']}) “{frozen['text'][:80]}”"
    if claim is None:
        return [f"{name}: no longer in the ledger"]
    problems = []
    if claim.text != frozen["text"] or claim.fingerprint != frozen["fingerprint"]:
        problems.append(f"{name}: text or fingerprint changed since the report was built")
    if frozen["code"] not in approved:
        problems.append(f"{name}: no longer approved")
    links = {
        (str(ln.snapshot.code), ln.quote_start, ln.quote_end): ln for ln in claim.evidence.all()
    }
    for row in document["appendix_b"]:
        if row["claim_code"] != frozen["code"]:
            continue
        link = links.get((row["snapshot_code"], row["quote_start"], row["quote_end"]))
        if link is None or _link_moved(link, row):
            problems.append(f"{name}: evidence {row['label']} changed in the ledger")
            continue
        problems += _claim_problems(claim, [link], frozen["label"])
    return problems


def _link_moved(link: EvidenceLink, row: dict[str, Any]) -> bool:
    return bool(
        link.quote != row["quote"]
        or link.snapshot.text_sha256 != row["snapshot_sha256"]
        or link.passage_fingerprint != row["passage_fingerprint"]
    )


# --- exporting ------------------------------------------------------------------------


def do_export_report(report: Report, fmt: str, user: Any) -> ExportFile:
    """Render one format after re-checking integrity; record the export."""
    if fmt not in FORMATS:
        raise Http404("No such export format")
    problems = integrity_problems(report)
    if problems:
        raise ExportRefused(problems)
    document = report.outline
    data = render_format(report, fmt)
    withheld = withheld_texts(report.run, set(report.claim_codes))
    leaked = find_withheld(_searchable(report, fmt, data), withheld, document)
    if leaked is not None:
        raise ExportRefused(
            [f"the text of an excluded claim or candidate would appear in the {fmt} export"]
        )
    Export.objects.create(
        report=report,
        format=fmt,
        content_hash=hashlib.sha256(data).hexdigest(),
        size=len(data),
        created_by=user,
    )
    content_type, ext = FORMATS[fmt]
    filename = f"report-{report.run.code}-v{report.version}.{ext}"
    return ExportFile(fmt=fmt, filename=filename, content_type=content_type, data=data)


def render_format(report: Report, fmt: str) -> bytes:
    document = report.outline
    if fmt == "md":
        return report.markdown.encode()
    if fmt == "html":
        return render_html(document).encode()
    if fmt == "pdf":
        return render_pdf(render_html(document))
    if fmt == "bib":
        return citations.bibtex(document["bibliography"]).encode()
    if fmt == "csl":
        return citations.csl_json(document["bibliography"]).encode()
    return _bundle(report)


def _searchable(report: Report, fmt: str, data: bytes) -> str:
    """The text an export shows, for the withheld-text scan (snapshot texts excepted).

    A PDF is Chromium's print of the HTML export, so its HTML source is scanned: the same
    words, without pypdf's text extraction (9 s for a 78-page report on this machine).
    """
    if fmt == "pdf":
        return render_html(report.outline)
    if fmt == "zip":
        with zipfile.ZipFile(_bytes_io(data)) as archive:
            return " ".join(
                archive.read(n).decode("utf-8", "replace")
                for n in archive.namelist()
                if not n.startswith("snapshots/")
            )
    return data.decode("utf-8", "replace")


def _bytes_io(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)


def _bundle(report: Report) -> bytes:
    document = report.outline
    run = report.run
    plan_version = run.plan_version
    return bundle.build_bundle(
        document=document,
        report={
            "code": str(report.code),
            "version": report.version,
            "title": document["header"]["title"],
            "content_hash": report.content_hash,
            "synthesizer": report.synthesizer,
        },
        markdown=report.markdown,
        html=render_html(document),
        plan_version={
            "plan_code": str(plan_version.plan.code),
            "question": plan_version.plan.question,
            "number": plan_version.number,
            "content": plan_version.content,
            "content_hash": plan_version.content_hash,
        },
        run={
            "code": str(run.code),
            "config": run.config,
            "config_hash": run.config_hash,
            "budgets": run.budgets,
            "state": run.state,
            "stages": document["appendix_d"]["stages"],
        },
        claims=_bundle_claims(report),
        snapshots=_bundle_snapshots(document),
        bibtex=citations.bibtex(document["bibliography"]),
        csl=citations.csl_json(document["bibliography"]),
    )


def _bundle_claims(report: Report) -> dict[str, Any]:
    document = report.outline
    decisions: dict[str, list[dict[str, Any]]] = {}
    for row in document["appendix_c"]:
        decisions.setdefault(row["claim_code"], []).append(row)
    approved = []
    for claim in document["claims"]:
        history = decisions.get(claim["code"], [])
        last = history[-1]["action"] if history else ""
        approved.append(claim | {"decisions": history, "last_action": last})
    return {
        "approved": approved,
        "excluded": document["appendix_a"],
        "set_aside_at_mining": document.get("appendix_a_set_aside", []),
    }


def _bundle_snapshots(document: dict[str, Any]) -> list[dict[str, Any]]:
    codes = sorted({row["snapshot_code"] for row in document["appendix_b"]})
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
