"""Building a report version from a reviewed run's approved capsules.

- ``check_request_report(user, run)``: the web's "Build report": moves the run to
  ``synthesizing`` and queues the stage (``research.stages.synthesize``) that a worker
  runs; nothing is built inside the request.
- ``load_report_inputs(run)`` (``reports.inputs``: every input, once, as typed records)
  → ``synthesize`` (pure) → ``do_save_report(...)``: the
  stage's load, step and save. ``do_build_report(run, user)`` chains them in one call
  (the ``runplan`` command, tests, benchmarks).

Who may build is ``reports.access``; the checks a built version passes before any export
are ``reports.integrity``; exporting it is ``reports.export``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from reports.access import can_build_report
from reports.exports.answer import untraceable_numbers
from reports.exports.document import build_document, sha256_text
from reports.exports.markdown import render_markdown
from reports.inputs import ReportInputs, ReportRefused, load_report_inputs
from reports.models import Report
from research.models import Run
from research.pipeline.synthesize import Synthesis
from research.providers.llm import LLMClient
from review.services.gate import gate_status

__all__ = ["ReportInputs", "ReportRefused", "load_report_inputs"]


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


def check_build_report(user: Any, run: Run) -> Report:
    if not can_build_report(user, run.plan_version.plan):
        raise PermissionDenied("Only the plan's owner or its reviewers build reports.")
    return do_build_report(run, user)


def do_build_report(run: Run, user: Any) -> Report:
    """1. load (gate open, approved capsules, evidence intact); 2. synthesize; 3. save."""
    inputs = load_report_inputs(run)
    synthesis = inputs.synthesize(LLMClient.from_settings())
    return do_save_report(prepare_report(run, user, synthesis, inputs))


def prepare_report(
    run: Run, user: Any, synthesis: Synthesis, inputs: ReportInputs, *, ends_in: str = ""
) -> Report:
    """The next report version, frozen but not saved yet (``render_checked`` works on it).
    ``ends_in``: the state the run ends in once it is saved (the synthesizing stage's
    "done"), which Appendix D states instead of the state mid-build."""
    version = (Report.objects.filter(run=run).aggregate(v=Max("version"))["v"] or 0) + 1
    created_at = timezone.now()
    audited = inputs.audited  # read once: the method line and the frozen copy agree
    document = build_document(
        inputs.document_inputs(
            synthesis,
            version=version,
            created_by=user.get_username() if user else "",
            created_at=created_at,
            ends_in=ends_in,
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
