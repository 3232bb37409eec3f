"""Report pages: versions of a run's report, one report, exports, and the run diff."""

from __future__ import annotations

from uuid import UUID

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from reports.access import can_build_report, get_report_for_user, run_reports
from reports.build import ReportRefused, check_request_report
from reports.export import FORMATS, ExportBusy, ExportRefused, do_export_report
from reports.exports.html import report_context
from reports.exports.pdf import PdfBusy, PdfError
from reports.exports.records import UnsupportedDocument
from reports.integrity import report_document
from reports.models import Report
from reports.preview import report_preview
from reports.signing import key_id, key_path, public_key_b64, public_key_pem, signing_public_key
from research.http import AuthedHttpRequest
from research.models import Run
from research.services import get_run_for_user
from review.diff import RunDiffRecord, previous_run
from review.diff import diff_runs as compute_diff
from review.models import RunDiff
from review.rundiffs import stored_record
from review.services.gate import gate_status


@require_GET
def list_reports(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = get_run_for_user(request.user, code)
    context = {
        "run": run,
        "reports": run_reports(run),
        "gate": gate_status(run),
        "can_build": can_build_report(request.user, run.plan_version.plan),
        "previous": previous_run(run),
        "preview": report_preview(run) if run.is_reviewable else None,
    }
    return render(request, "reports/report_list.html", context)


@require_POST
def create_report(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = get_run_for_user(request.user, code)
    try:
        check_request_report(request.user, run)
    except ReportRefused as exc:
        messages.error(request, str(exc))
        return redirect("review-list-reports", code=run.code)
    messages.success(request, "Building the report: a worker writes it; this page shows progress.")
    return redirect(run)


@require_GET
def show_report(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    report = get_report_for_user(request.user, code)
    try:
        doc, unreadable = report_document(report), ""
    except UnsupportedDocument as exc:  # built by older code: say so, lose nothing
        doc, unreadable = None, str(exc)
    context = {
        **(report_context(doc) if doc is not None else {}),
        "report": report,
        "unreadable": unreadable,
        "versions": run_reports(report.run),
        "formats": FORMATS,
        # What the post-synthesis checks took out of the writer's prose, each sentence
        # named (never exported: no one approved these words).
        "removed": [f for f in report.check_findings if f.get("action") in ("removed", "refused")],
    }
    return render(request, "reports/report_detail.html", context)


@require_GET
def show_report_version(request: AuthedHttpRequest, code: UUID, version: int) -> HttpResponse:
    run = get_run_for_user(request.user, code)
    report = run.reports.filter(version=version).first()
    if report is None:
        raise Http404("No such report version")
    return redirect(report)


@require_GET
def export_report(request: AuthedHttpRequest, code: UUID, fmt: str) -> HttpResponse:
    report = get_report_for_user(request.user, code)
    try:
        export = do_export_report(report, fmt, request.user)
    except ExportRefused as exc:
        context = {"report": report, "problems": exc.problems}
        return render(request, "reports/report_refused.html", context, status=409)
    except ExportBusy as exc:  # this user's PDF is still printing: nothing lost
        return _not_exported(request, report, exc, 429, EXPORT_RETRY_AFTER_S)
    except PdfBusy as exc:  # every printing slot stayed taken for the whole wait
        return _not_exported(request, report, exc, 503, exc.retry_after_s)
    except PdfError as exc:  # no Chromium, or it could not print
        return _not_exported(request, report, exc, 503)
    response = HttpResponse(export.data, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response


EXPORT_RETRY_AFTER_S = 5  # a PDF prints in a few seconds


def _not_exported(
    request: AuthedHttpRequest,
    report: Report,
    error: Exception,
    status: int,
    retry_after_s: int = 0,
) -> HttpResponse:
    """The reason an export was not made, on the app's page (the message in ``#not-exported``)."""
    context = {"report": report, "message": str(error), "retry_after_s": retry_after_s}
    response = render(request, "reports/report_not_exported.html", context, status=status)
    if retry_after_s:
        response["Retry-After"] = str(retry_after_s)
    return response


@require_GET
def diff_runs(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = get_run_for_user(request.user, code)
    against = _against(request, run)
    stored = RunDiff.objects.filter(run=run).first()
    diff: RunDiffRecord | None
    if against is not None and stored is not None and stored.against_id == against.pk:
        diff = stored_record(stored)  # what was recorded when the run reached review
    else:
        diff = compute_diff(against, run) if against is not None else None
    runs = Run.objects.filter(plan_version__plan=run.plan_version.plan).exclude(pk=run.pk)
    context = {"run": run, "against": against, "diff": diff, "runs": runs}
    return render(request, "reports/diff.html", context)


def _against(request: AuthedHttpRequest, run: Run) -> Run | None:
    raw = request.GET.get("against", "")
    if not raw:
        return previous_run(run)
    try:
        other = get_run_for_user(request.user, UUID(raw))
    except ValueError as exc:
        raise Http404("No such run") from exc
    if other.plan_version.plan_id != run.plan_version.plan_id:
        raise Http404("Runs of different plans cannot be diffed")
    return other


@require_GET
def about(request: AuthedHttpRequest) -> HttpResponse:
    """This instance: the public key that signs its report bundles, and how to check one."""
    key = signing_public_key()
    context = {
        "public_key": public_key_b64(key),
        "public_key_pem": public_key_pem(key),
        "key_id": key_id(key),
        "key_file": key_path().name,
    }
    return render(request, "reports/about.html", context)


@require_GET
def download_public_key(request: AuthedHttpRequest) -> HttpResponse:
    response = HttpResponse(public_key_pem(signing_public_key()), content_type="text/plain")
    response["Content-Disposition"] = 'attachment; filename="evidence-bureau-bundle-key.pem"'
    return response
