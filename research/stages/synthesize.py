"""Synthesizing stage: build the run's report from approved capsules, then prove its exports.

The web's "Build report" only moves the run to ``synthesizing`` (``research.services.
do_start_synthesis``, which records who asked in this stage's cursor); a worker runs
this stage:

1. load: the review gate must be open; the approved claims and their cited quotes, every
   quote re-checked against its snapshot (``reports.build.load_report_inputs``);
2. step: ``research.pipeline.synthesize.synthesize`` (pure; capsules only);
3. prove: the frozen document of the next version is rendered in every export format
   and each output scanned for withheld text (``reports.export.render_checked``) before
   anything is saved, so a version that could not export never exists;
4. save: the version, and in the same transaction the checkpoint cursor naming it (and
   the sha256 of each format, which every later download matches), so a retried job
   builds nothing twice.

Then the run is ``done``. A refusal (the gate closed again, evidence changed, a leak)
sends the run back to ``awaiting_review`` with the reason in the stage's notes.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from reports.build import ReportRefused, do_save_report, load_report_inputs, prepare_report
from reports.export import FORMATS, ExportRefused, render_checked
from reports.models import Report
from research.models import RunState
from research.pipeline.synthesize import NoCapsulesError
from research.providers.llm import LLMClient
from research.stages.base import StageContext

logger = logging.getLogger(__name__)
# load, synthesize, save, then one step per export format
STEPS = 3 + len(FORMATS)


def run(ctx: StageContext) -> str:
    """Build and check the report; return the next state (done, or back to review)."""
    if ctx.cursor.get("report"):
        ctx.progress(STEPS, STEPS)
        return RunState.DONE
    ctx.progress(0, STEPS)
    try:
        inputs = load_report_inputs(ctx.run)
        ctx.progress(1, STEPS)
        synthesis = inputs.synthesize(LLMClient.from_settings())
        ctx.progress(2, STEPS)
        # Saved, the version ends the run done: its Appendix D says so, not "synthesizing".
        report = prepare_report(ctx.run, _requester(ctx), synthesis, inputs, ends_in=RunState.DONE)
        ctx.progress(3, STEPS)
        hashes = _check_exports(ctx, report)  # on the unsaved version: nothing half-built
        with transaction.atomic():
            do_save_report(report)
            ctx.save_cursor(report=str(report.code), version=report.version, exports=hashes)
    except (ReportRefused, ExportRefused, NoCapsulesError) as exc:
        ctx.note("report", f"not built: {exc}")
        return RunState.AWAITING_REVIEW
    except Exception as exc:  # a reviewed run is never lost to a failed build
        logger.exception("run %s: building the report crashed", ctx.run.code)
        ctx.note("report", f"not built: {type(exc).__name__}: {exc}")
        return RunState.AWAITING_REVIEW
    refused = synthesis.check.refused if synthesis.check else []
    said = f"; the semantic check refused {len(refused)} sentence(s)" if refused else ""
    ctx.note("report", f"version {report.version} ({report.synthesizer}){said}")
    ctx.count(claims=len(report.claim_codes))
    return RunState.DONE


def _requester(ctx: StageContext) -> Any:
    pk = ctx.cursor.get("requested_by")
    return get_user_model().objects.filter(pk=pk).first() if pk else None


def _check_exports(ctx: StageContext, report: Report) -> dict[str, str]:
    """Render every format once (integrity re-check and withheld-text scan included);
    the sha256 of each, which every later download of this version matches."""
    hashes = {}
    for n, fmt in enumerate(FORMATS, 4):
        export = render_checked(report, fmt)
        hashes[fmt] = hashlib.sha256(export.data).hexdigest()
        ctx.count(**{f"{fmt}_bytes": len(export.data)})
        ctx.progress(n, STEPS)
    return hashes
