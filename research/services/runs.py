"""Runs: starting and cancelling them, and every write to a Run row the pipeline makes
(state transitions, counters, stop reasons).

The stages and the runner write run rows only through these functions; the stage
checkpoints are written by :mod:`research.services.checkpoints`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from ledger.models import Passage
from ledger.services.library import plan_may_search
from research.models import Plan, PlanVersion, Run, RunState
from research.pipeline.records import PlanContent, parse_plan, run_blockers
from research.progress import publish_run_progress
from research.queue import schedule_step
from research.roles import check_edit_plan_access
from research.services.checkpoints import do_reset_checkpoint
from research.services.plans import PlanConflict, PlanInvalid

if TYPE_CHECKING:
    from ledger.services.verdicts import VerdictTally

# States in which the pipeline still works and a cancel can stop it.
CANCELLABLE_STATES = {
    RunState.QUEUED,
    RunState.SEARCHING,
    RunState.INGESTING,
    RunState.INDEXING,
    RunState.RETRIEVING,
    RunState.MINING,
    RunState.COUNTERING,
    RunState.VERIFYING,
}


class RunRefused(Exception):
    """A run cannot start or be cancelled; the message says why."""


class RunStateConflict(Exception):
    """Another process moved the run while a stage was running."""


# --- starting and cancelling ---------------------------------------------------------


def enabled_web_adapters() -> list[str]:
    """Web search adapters the settings enable (read at call time)."""
    flags = {
        "searxng": bool(settings.SEARXNG_URL),
        "arxiv": settings.ARXIV_ENABLED,
        "openalex": settings.OPENALEX_ENABLED,
        "wikipedia": settings.WIKIPEDIA_ENABLED,
    }
    return [name for name, on in flags.items() if on]


def run_config(plan: Plan) -> dict[str, Any]:
    """The pipeline settings a run uses; its hash identifies the configuration."""
    return {
        "library": str(plan.library.code) if plan.library else None,
        "scope": plan.scope,  # mining applies the scope as it was when the run started
        "web_adapters": enabled_web_adapters(),
        "embedding_model": settings.EMBEDDING_MODEL or "all-MiniLM-L6-v2 (offline wheel)",
        "reranker_model": settings.RERANKER_MODEL or None,
        "nli_model": settings.NLI_MODEL or "shipped",
        "llm_model": settings.LLM_MODEL if settings.LLM_BASE_URL else None,
        "retrieval": {
            "rrf_k": settings.RETRIEVAL_RRF_K,
            "candidates": settings.RETRIEVAL_CANDIDATES,
            "hnsw_ef_search": settings.RETRIEVAL_HNSW_EF_SEARCH,
        },
    }


def start_blockers(plan: Plan, content: PlanContent) -> list[str]:
    """Why a run of this plan version must not start, in words."""
    problems = run_blockers(content)
    if content.kind == "audit":  # it reads what the report cites, library or not
        if plan.library is not None and not plan_may_search(plan, plan.library):
            problems.append(
                f"The plan's owner may no longer read the library {plan.library.name!r}; "
                "choose another library in Plan settings."
            )
        return problems
    uses_library = any("library" in q.source_classes for _, q in content.enabled_queries())
    web = enabled_web_adapters()
    if plan.library is not None and not plan_may_search(plan, plan.library):
        problems.append(
            f"The plan's owner may no longer read the library {plan.library.name!r}; "
            "choose another library in Plan settings."
        )
    elif plan.library is None and not web:
        problems.append(
            "There is nothing to search: choose a library for this plan (Plan settings), "
            "or enable a web search adapter in the server settings."
        )
    elif plan.library is not None and not web:
        if not uses_library:
            problems.append(
                "No enabled query searches the library (source class 'library'), and no "
                "web search adapter is enabled."
            )
        elif not Passage.objects.filter(source__libraries=plan.library).exists():
            problems.append(
                f"The library {plan.library.name!r} has no ingested passages yet; "
                "import documents into it first."
            )
    return problems


def check_start_run(user: User, plan: Plan, base: int, *, enqueue: bool = True) -> Run:
    """Start a run of the current version; refuse (nothing created) when it cannot run.

    ``enqueue=False`` leaves the run for a synchronous driver (``runplan``) instead of
    the workers.
    """
    check_edit_plan_access(user, plan)
    version = plan.current_version
    if version is None or version.number != base:
        raise PlanConflict(base, version.number if version else 0)
    content = parse_plan(version.content)
    problems = start_blockers(plan, content)
    if problems:
        raise PlanInvalid(problems)
    return do_start_run(user, version, content, enqueue=enqueue)


def do_start_run(
    user: User, version: PlanVersion, content: PlanContent, *, enqueue: bool = True
) -> Run:
    with transaction.atomic():
        run = Run.objects.create(
            plan_version=version,
            created_by=user,
            config=run_config(version.plan),
            budgets=content.budgets.model_dump(),
        )
        if enqueue:
            schedule_step(run)
    return run


def do_request_cancel(user: User, run: Run) -> Run:
    """Ask a run to stop at its next safe point (a queued run stops at once)."""
    check_edit_plan_access(user, run.plan_version.plan)
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if locked.is_terminal:
            raise RunRefused(f"This run has already ended ({locked.get_state_display()}).")
        if locked.state not in CANCELLABLE_STATES:
            raise RunRefused(
                f"This run's pipeline has finished ({locked.get_state_display()}); "
                "there is nothing left to cancel."
            )
        locked.cancel_requested = True
        fields = ["cancel_requested"]
        if locked.state == RunState.QUEUED:
            locked.state = RunState.CANCELLED
            locked.stop_reason = f"Cancelled by {user.get_username()}."
            locked.finished_at = timezone.now()
            fields += ["state", "stop_reason", "finished_at"]
        locked.save(update_fields=fields)
        publish_run_progress(locked.code)
    return locked


def do_start_synthesis(run: Run, user: User, *, enqueue: bool = True) -> Run:
    """Move a reviewed run (or a done one, for a new report version) to ``synthesizing``
    and queue the stage a worker runs; who asked is kept in the stage's cursor.

    The caller checks the review gate (``reports.build.check_request_report``).
    """
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if locked.state not in (RunState.AWAITING_REVIEW, RunState.DONE):
            raise RunRefused(
                "A report can be built once the run awaits review; it is "
                f"{locked.get_state_display().lower()}."
            )
        locked.transition(RunState.SYNTHESIZING)
        round_no = int(locked.counters.get("round", 0))
        cursor = {"requested_by": user.pk if user else None}
        do_reset_checkpoint(locked, RunState.SYNTHESIZING, round_no, cursor)
        publish_run_progress(locked.code)
        if enqueue:
            schedule_step(locked)
    run.state = locked.state
    return locked


# --- what the pipeline writes on a run ----------------------------------------------------


def do_mark_started(run: Run) -> None:
    """The run's first step begins now (its wall-time budget counts from here)."""
    if run.started_at is None:
        run.started_at = timezone.now()
        run.save(update_fields=["started_at"])


def do_transition(run: Run, target: str, **fields: Any) -> None:
    """The declared transition, guarded against a concurrent change of state."""
    locked = Run.objects.select_for_update().get(pk=run.pk)
    if locked.state != run.state:
        raise RunStateConflict(f"the run moved to {locked.state} while {run.state} was running")
    locked.transition(target)
    for name, value in fields.items():
        setattr(locked, name, value)
    if fields:
        locked.save(update_fields=list(fields))
    run.state = locked.state
    for name, value in fields.items():
        setattr(run, name, value)


def join_reasons(old: str, new: str) -> str:
    """``old`` with ``new`` appended, unless it says so already (a retried stage)."""
    return f"{old} {new}".strip() if new not in old else old


def do_add_stop_reason(run: Run, reason: str) -> None:
    """Say on the run why collection (or the run) stopped; a reason is never repeated."""
    joined = join_reasons(run.stop_reason, reason)
    if joined != run.stop_reason:
        run.stop_reason = joined
        run.save(update_fields=["stop_reason"])


def merge_counters(run: Run, values: dict[str, Any]) -> None:
    """Merge keys into ``run.counters`` atomically (other writers keep their keys)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE research_run SET counters = counters || %s::jsonb WHERE id = %s "
            "RETURNING counters",
            [json.dumps(values), run.pk],
        )
        row = cursor.fetchone()
    if row:
        run.counters = row[0] if isinstance(row[0], dict) else json.loads(row[0])


def refresh_counts(run: Run) -> None:
    """Recount what the run has produced (queries, hits, sources, passages, claims)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT
              (SELECT count(DISTINCT query_text) FROM ledger_searchhit WHERE run_id = %(r)s),
              (SELECT count(*) FROM ledger_searchhit WHERE run_id = %(r)s),
              (SELECT count(DISTINCT source_id) FROM ledger_searchhit WHERE run_id = %(r)s),
              (SELECT count(*) FROM ledger_passage p WHERE p.source_id IN
                  (SELECT source_id FROM ledger_searchhit WHERE run_id = %(r)s)),
              (SELECT count(*) FROM ledger_claim WHERE run_id = %(r)s)
            """,
            {"r": run.pk},
        )
        row = cursor.fetchone()
    keys = ("queries", "hits", "sources", "passages", "claims")
    counts = dict(zip(keys, (int(v) for v in row), strict=True)) if row else {}
    merge_counters(run, counts)


def do_record_families(run: Run, states: dict[str, str], quorum: int) -> None:
    """Which verifier families this run's verification counted, shadowed, or lacked.

    ``counters["verification"]["families"]``: family -> "counted", "check", "shadow",
    "unavailable: …" or "not configured …"; the run page and the report show it.
    """
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        section: dict[str, Any] = dict(locked.counters.get("verification", {}))
        section["families"] = dict(states)
        section["quorum"] = quorum
        locked.counters = {**locked.counters, "verification": section}
        locked.save(update_fields=["counters"])
    run.counters = locked.counters


def do_count_verification(run: Run, tally: VerdictTally) -> None:
    """Add one recorded verdict to ``counters["verification"]`` (votes, discards, status)."""
    locked = Run.objects.select_for_update().get(pk=run.pk)
    section: dict[str, Any] = dict(locked.counters.get("verification", {}))
    section["claims"] = int(section.get("claims", 0)) + 1
    section["votes"] = int(section.get("votes", 0)) + tally.votes
    section["discarded"] = int(section.get("discarded", 0)) + tally.discarded
    reasons: dict[str, int] = dict(section.get("discard_reasons", {}))
    for reason, n in tally.discard_reasons.items():
        reasons[reason] = reasons.get(reason, 0) + n
    section["discard_reasons"] = reasons
    section[tally.status] = int(section.get(tally.status, 0)) + 1
    if tally.shadow_status:
        shadow: dict[str, int] = dict(section.get("shadow", {}))
        key = f"{tally.status}->{tally.shadow_status}"
        shadow[key] = shadow.get(key, 0) + 1
        section["shadow"] = shadow
    if tally.unavailable:
        failed: dict[str, int] = dict(section.get("unavailable", {}))
        for family in tally.unavailable:
            failed[family] = failed.get(family, 0) + 1
        section["unavailable"] = failed
    locked.counters = {**locked.counters, "verification": section}
    locked.save(update_fields=["counters"])
    run.counters = locked.counters
