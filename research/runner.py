"""The run state machine driver: one ``handle_<state>`` per state, each returning the next.

:func:`step` runs the handler of a run's current state once:

1. load the run and its plan version; open (or resume) the stage's checkpoint;
2. call ``handle_<state>``, which works in small committed units, recording its
   cursor after each, and stops at safe points when cancelled or out of wall time; its
   seconds and model use are added to the checkpoint's ``cost`` (``providers.usage``);
3. in one transaction: close the checkpoint, make the declared transition, and (via
   ``schedule``) enqueue the next step, so no commit leaves a run without its next job.

A worker that dies mid-stage leaves the checkpoint ``running`` with its cursor; the
retried job calls :func:`step` again and the handler resumes from the cursor, writing
only rows keyed by content hashes or unique constraints, so nothing is duplicated.

Retries belong to the queue, with the one task policy (``config.procrastinate``,
``TASK_RETRY``): a retryable provider error that escapes a stage is recorded on the
stage's checkpoint (its error and a ``retries`` note, shown on the run page) and raised
as :class:`StageRetry`, so procrastinate runs the step again after the policy's wait;
on the policy's last attempt the run fails instead, in words, with the attempts made.
Anything else (a permanent error, a bug) fails the run at once with the error in words.
HTTP calls retry on their own, below this (``research.providers.retry``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from config.procrastinate import TASK_RETRY
from research.models import TERMINAL_STATES, Run, RunState, StageStatus
from research.pipeline.records import parse_plan
from research.progress import publish_run_progress
from research.providers import usage
from research.providers.base import ProviderError
from research.services.checkpoints import (
    do_add_cost,
    do_close_checkpoint,
    do_open_checkpoint,
    do_retry_checkpoint,
    do_skip_checkpoint,
)
from research.services.runs import (
    do_add_stop_reason,
    do_mark_started,
    do_transition,
    join_reasons,
    merge_counters,
    refresh_counts,
)
from research.stages import (
    audit,
    counter,
    expansion,
    ingest,
    mine,
    retrieve,
    rundiff,
    search,
    synthesize,
    verify,
)
from research.stages.base import RunCancelled, StageContext, StageFailed, WallTimeExhausted

logger = logging.getLogger(__name__)

# The pipeline stops here and waits for people; "Build report" moves it to synthesizing.
WAITING_STATES = {RunState.AWAITING_REVIEW}
STAGE_LABELS: dict[str, str] = {
    RunState.QUEUED: "Queued",
    RunState.SEARCHING: "Searching",
    RunState.INGESTING: "Ingesting",
    RunState.INDEXING: "Indexing",
    RunState.RETRIEVING: "Retrieving evidence",
    RunState.MINING: "Mining claims",
    RunState.COUNTERING: "Gathering counter-evidence",
    RunState.VERIFYING: "Verifying claims",
    RunState.SYNTHESIZING: "Building the report",
}


class StageRetry(Exception):
    """A stage failed in a way that may pass; the queue runs the step again (TASK_RETRY)."""


@dataclass(frozen=True)
class StepResult:
    """What :func:`step` did: ``again`` asks for another step."""

    state: str
    again: bool


Schedule = Callable[[Run], None]


def _no_schedule(run: Run) -> None:
    return None


# --- handlers -------------------------------------------------------------------------


def handle_queued(ctx: StageContext) -> str:
    ctx.progress(1, 1)
    return RunState.SEARCHING


def handle_searching(ctx: StageContext) -> str:
    if audit.is_audit(ctx.plan):
        audit.cite(ctx)  # the report's citations first; the plan's queries, if any, after
    search.run(ctx)
    return RunState.INGESTING


def handle_ingesting(ctx: StageContext) -> str:
    ingest.run(ctx)
    return RunState.INDEXING


def handle_indexing(ctx: StageContext) -> str:
    ingest.index(ctx)
    return RunState.RETRIEVING


def handle_retrieving(ctx: StageContext) -> str:
    retrieve.run(ctx)
    if audit.is_audit(ctx.plan):  # an audit reads what the report cites: no follow-ups
        return RunState.MINING
    return RunState.SEARCHING if expansion.decide(ctx) else RunState.MINING


def handle_mining(ctx: StageContext) -> str:
    if audit.is_audit(ctx.plan):
        audit.mine(ctx)
        return RunState.COUNTERING
    mine.run(ctx)
    return RunState.COUNTERING


def handle_countering(ctx: StageContext) -> str:
    counter.run(ctx)
    return RunState.VERIFYING


def handle_verifying(ctx: StageContext) -> str:
    verify.run(ctx)
    rundiff.run(ctx)  # the ledger is complete: diff it, carry unchanged decisions over
    return RunState.AWAITING_REVIEW


def handle_synthesizing(ctx: StageContext) -> str:
    return synthesize.run(ctx)


HANDLERS: dict[str, Callable[[StageContext], str]] = {
    RunState.QUEUED: handle_queued,
    RunState.SEARCHING: handle_searching,
    RunState.INGESTING: handle_ingesting,
    RunState.INDEXING: handle_indexing,
    RunState.RETRIEVING: handle_retrieving,
    RunState.MINING: handle_mining,
    RunState.COUNTERING: handle_countering,
    RunState.VERIFYING: handle_verifying,
    RunState.SYNTHESIZING: handle_synthesizing,
}
# Stages that collect evidence; a spent wall-time budget skips to mining what was found.
COLLECTING = {RunState.SEARCHING, RunState.INGESTING, RunState.INDEXING, RunState.RETRIEVING}
# After it, what was mined is still searched against and verified, never left unjudged.
AFTER_OUT_OF_TIME: dict[str, str] = {
    RunState.MINING: RunState.COUNTERING,
    RunState.COUNTERING: RunState.VERIFYING,
}


# --- the step ---------------------------------------------------------------------------


def current_round(run: Run) -> int:
    return int(run.counters.get("round", 0))


def step(
    run_code: UUID | str, schedule: Schedule = _no_schedule, *, attempt: int = 0
) -> StepResult:
    """Run the current state's handler once and move the run on (see module docstring).

    ``attempt`` is how many times the queue already ran this step (procrastinate's
    ``job.attempts``); it decides whether a retryable failure is retried or ends the run.
    """
    run = Run.objects.select_related("plan_version__plan").get(code=run_code)
    if run.is_terminal or run.state in WAITING_STATES:
        return StepResult(run.state, again=False)
    do_mark_started(run)
    plan = parse_plan(run.plan_version.content)
    round_no = current_round(run) if run.state != RunState.QUEUED else 0
    cp = do_open_checkpoint(run, round_no)
    publish_run_progress(run.code)
    ctx = StageContext(run=run, plan=plan, checkpoint=cp, round=round_no)
    try:
        target = _handle(ctx)
    except RunCancelled:
        return _end(
            ctx, RunState.CANCELLED, StageStatus.SKIPPED, stop="Cancelled at the user's request."
        )
    except WallTimeExhausted:
        return _out_of_time(ctx, schedule)
    except ProviderError as exc:
        if not exc.permanent:
            return _retry_or_fail(ctx, exc, attempt)
        return _end(ctx, RunState.FAILED, StageStatus.FAILED, error=_words(ctx, exc))
    except StageFailed as exc:
        return _end(ctx, RunState.FAILED, StageStatus.FAILED, error=_words(ctx, exc))
    except Exception as exc:
        logger.exception("run %s: %s stage crashed", run.code, run.state)
        return _end(ctx, RunState.FAILED, StageStatus.FAILED, error=_words(ctx, exc))
    return _advance(ctx, target, schedule)


def _handle(ctx: StageContext) -> str:
    """The state's handler under a usage recorder: its seconds and model use are added to
    the checkpoint's cost when it returns or raises (a failed or retried attempt spent them
    too); recording them never fails the step."""
    with usage.recording() as recorder:
        try:
            if ctx.run.cancel_requested:
                raise RunCancelled()
            return HANDLERS[ctx.run.state](ctx)
        finally:
            try:
                do_add_cost(ctx.checkpoint, recorder.spent())
            except Exception:
                logger.exception("run %s: could not record the stage's cost", ctx.run.code)


def _words(ctx: StageContext, exc: BaseException) -> str:
    label = STAGE_LABELS.get(ctx.run.state, ctx.run.state)
    detail = str(exc) or type(exc).__name__
    return f"{label} failed: {detail}"


def _advance(ctx: StageContext, target: str, schedule: Schedule) -> StepResult:
    run = ctx.run
    with transaction.atomic():
        do_close_checkpoint(ctx.checkpoint, StageStatus.DONE)
        extra: dict[str, Any] = {}
        stops = target in WAITING_STATES or target in TERMINAL_STATES
        if stops:
            extra["finished_at"] = timezone.now()
        expanding = run.state == RunState.RETRIEVING and target == RunState.SEARCHING
        do_transition(run, target, **extra)
        if expanding:  # best-first expansion: the next round begins with the transition
            merge_counters(run, {"round": ctx.round + 1})
        refresh_counts(run)
        again = not stops
        if again:
            schedule(run)
        publish_run_progress(run.code)
    return StepResult(run.state, again=again)


def _end(
    ctx: StageContext, state: str, status: str, *, stop: str = "", error: str = ""
) -> StepResult:
    run = ctx.run
    with transaction.atomic():
        do_close_checkpoint(ctx.checkpoint, status, error)
        fields: dict[str, Any] = {"finished_at": timezone.now()}
        if stop:
            fields["stop_reason"] = join_reasons(run.stop_reason, stop)
        if error:
            fields["error"] = error
        do_transition(run, state, **fields)
        refresh_counts(run)
        publish_run_progress(run.code)
    return StepResult(run.state, again=False)


def _retry_or_fail(ctx: StageContext, exc: ProviderError, attempt: int) -> StepResult:
    """Record the failed attempt and hand the step back to the queue, or fail the run."""
    delay = TASK_RETRY.delay_s(attempt)
    if delay is None:
        words = f"{_words(ctx, exc)} (gave up after {attempt + 1} attempts of the stage)"
        return _end(ctx, RunState.FAILED, StageStatus.FAILED, error=words)
    message = f"attempt {attempt + 1} failed: {exc}; the queue runs the stage again in {delay} s"
    with transaction.atomic():
        do_retry_checkpoint(ctx.checkpoint, message)
        ctx.note("retries", message)
        publish_run_progress(ctx.run.code)
    raise StageRetry(message) from exc


def _out_of_time(ctx: StageContext, schedule: Schedule) -> StepResult:
    """Wall time spent: stop collecting, mine and verify what was found; else finish."""
    run = ctx.run
    reason = f"Wall-time budget ({ctx.wall_time_budget_s} s) reached during {run.state}."
    ctx.note("stopped", reason)
    do_add_stop_reason(run, reason)
    if run.state in COLLECTING:
        return _jump(ctx, RunState.MINING, schedule)
    return _advance(ctx, AFTER_OUT_OF_TIME.get(run.state, RunState.AWAITING_REVIEW), schedule)


def _jump(ctx: StageContext, target: str, schedule: Schedule) -> StepResult:
    """Skip the remaining collecting stages (each skipped one is recorded as such)."""
    run = ctx.run
    order = [RunState.SEARCHING, RunState.INGESTING, RunState.INDEXING, RunState.RETRIEVING]
    with transaction.atomic():
        do_close_checkpoint(ctx.checkpoint, StageStatus.DONE)
        for state in order[order.index(RunState(run.state)) + 1 :]:
            do_transition(run, state)
            do_skip_checkpoint(run, state, ctx.round, "wall time")
        do_transition(run, target)
        refresh_counts(run)
        schedule(run)
        publish_run_progress(run.code)
    return StepResult(run.state, again=True)


def run_to_end(
    run_code: UUID | str,
    *,
    on_step: Callable[[StepResult], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Run:
    """Drive a run synchronously through the same handlers (the ``runplan`` command).

    A step that raises :class:`StageRetry` is run again after the task policy's wait, as
    the queue would.
    """
    attempt = 0
    while True:
        try:
            result = step(run_code, attempt=attempt)
        except StageRetry:
            sleep(TASK_RETRY.delay_s(attempt) or 0)
            attempt += 1
            continue
        attempt = 0
        if on_step:
            on_step(result)
        if not result.again:
            break
    return Run.objects.get(code=run_code)
