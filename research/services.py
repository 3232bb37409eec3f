"""Operations on plans and runs; views, commands and tasks call these.

Access: a plan is visible to its owner and members (strangers get 404); only
researchers and staff may create, edit or start (everyone else who can see it gets
403). Every edit makes a new immutable PlanVersion, and an edit based on a version
that is no longer current is refused with :class:`PlanConflict`, never merged silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone

from ledger.models import Library, Passage, SearchHit
from research.models import Plan, PlanVersion, Query, Run, RunState
from research.pipeline import planner, records
from research.pipeline.records import (
    PlanContent,
    PlanEditError,
    PlanSchemaError,
    edited,
    parse_plan,
    question_problems,
    run_blockers,
)
from research.progress import publish_run_progress

if TYPE_CHECKING:
    from research.stages.adapters import FoundHit

RESEARCHER_GROUP = "researcher"
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


class PlanInvalid(Exception):
    """The input or the resulting plan is not acceptable; ``messages`` say why."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


class PlanConflict(Exception):
    """Someone saved a newer version after this edit's base version."""

    def __init__(self, base: int, current: int) -> None:
        super().__init__(
            f"This plan changed while you were editing: you started from version {base}, "
            f"and version {current} has been saved since. Your change was not applied; "
            "it is kept below so you can review it against the new version and save again."
        )
        self.base = base
        self.current = current


class RunRefused(Exception):
    """A run cannot start or be cancelled; the message says why."""


# --- access ---------------------------------------------------------------------------


def plans_for_user(user: Any) -> QuerySet[Plan]:
    plans = Plan.objects.all()
    if not user.is_superuser:
        plans = plans.filter(Q(owner=user) | Q(members=user)).distinct()
    return plans


def get_plan_for_user(user: Any, code: UUID) -> Plan:
    """A plan the user may see; strangers get 404, never a hint that it exists."""
    plan = plans_for_user(user).filter(code=code).first()
    if plan is None:
        raise Http404("No such plan")
    return plan


def can_edit_plans(user: Any) -> bool:
    """Researchers and staff may create, edit and start plans."""
    return bool(
        user.is_staff or user.is_superuser or user.groups.filter(name=RESEARCHER_GROUP).exists()
    )


def get_editable_plan_for_user(user: Any, code: UUID) -> Plan:
    """A plan the user may change: 404 for strangers, 403 for read-only members."""
    plan = get_plan_for_user(user, code)
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may edit or start plans.")
    return plan


def get_run_for_user(user: Any, code: UUID) -> Run:
    run = Run.objects.select_related("plan_version__plan").filter(code=code).first()
    if run is None or not run.plan_version.plan.is_visible_to(user):
        raise Http404("No such run")
    return run


# --- plans ----------------------------------------------------------------------------


def current_content(plan: Plan) -> PlanContent:
    assert plan.current_version is not None
    return parse_plan(plan.current_version.content)


def check_create_plan(user: Any, question: str, scope: str = "", library: Any = None) -> Plan:
    """Propose a plan for a question and save it as version 1, or raise PlanInvalid."""
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may create plans.")
    problems = question_problems(question)
    if problems:
        raise PlanInvalid(problems)
    from research.providers.llm import LLMClient

    try:
        content = planner.propose_plan(question, LLMClient.from_settings())
    except PlanSchemaError as exc:
        raise PlanInvalid(exc.messages) from exc
    return do_create_plan(user, content, scope=scope, library=library)


def do_create_plan(user: Any, content: PlanContent, scope: str = "", library: Any = None) -> Plan:
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=user, question=content.question, scope=scope, library=library
        )
        PlanVersion.create_next(plan, content.dump(), user, note=f"proposed by {content.planner}")
    return plan


def check_save_plan(
    user: Any, plan: Plan, base: int, content: PlanContent | dict[str, Any], note: str
) -> PlanVersion:
    """Save an edited plan as the next version, if ``base`` is still the current one."""
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may edit plans.")
    try:
        valid = edited(content) if isinstance(content, PlanContent) else parse_plan(content)
    except PlanSchemaError as exc:
        raise PlanInvalid(exc.messages) from exc
    with transaction.atomic():
        locked = (
            Plan.objects.select_for_update(of=("self",))
            .select_related("current_version")
            .get(pk=plan.pk)
        )
        current = locked.current_version.number if locked.current_version else 0
        if current != base:
            raise PlanConflict(base, current)
        if locked.current_version and locked.current_version.content == valid.dump():
            return locked.current_version  # nothing changed: no new version
        version = PlanVersion.create_next(locked, valid.dump(), user, note=note)
    plan.current_version = version
    return version


def check_edit_plan(
    user: Any,
    plan: Plan,
    base: int,
    edit: Callable[[PlanContent], str],
) -> PlanVersion:
    """Apply ``edit`` (which mutates the plan and returns a note) to version ``base``."""
    version = plan.versions.filter(number=base).first()
    if version is None:
        raise PlanInvalid([f"Version {base} of this plan does not exist."])
    content = parse_plan(version.content)
    try:
        note = edit(content)
    except PlanEditError as exc:
        raise PlanInvalid([str(exc)]) from exc
    return check_save_plan(user, plan, base, content, note)


def plan_edit(op: str, data: dict[str, Any]) -> Callable[[PlanContent], str]:
    """The edit an editor form asks for, as a function of the plan (returns a note)."""
    sq_fields = ("text", "dimension", "priority", "budget")
    q_fields = ("text", "query_class", "source_classes", "priority")

    def pick(names: tuple[str, ...]) -> dict[str, Any]:
        return {name: data[name] for name in names if name in data}

    def edit(plan: PlanContent) -> str:
        key = data.get("key", "")
        if op == "add_subquestion":
            return f"added subquestion {records.add_subquestion(plan, **pick(sq_fields))}"
        if op == "edit_subquestion":
            records.update_subquestion(plan, key, **pick((*sq_fields, "enabled")))
            return f"edited subquestion {key}"
        if op == "toggle_subquestion":
            sq = records.find_subquestion(plan, key)
            sq.enabled = not sq.enabled
            return f"{'enabled' if sq.enabled else 'disabled'} subquestion {key}"
        if op == "move_subquestion":
            records.move_subquestion(plan, key, data["delta"])
            return f"moved subquestion {key} {data['direction']}"
        if op == "add_query":
            new = records.add_query(plan, data["subquestion"], **pick(q_fields))
            return f"added query {new} to {data['subquestion']}"
        if op == "edit_query":
            records.update_query(plan, key, **pick((*q_fields, "enabled")))
            return f"edited query {key}"
        if op == "toggle_query":
            _, q = records.find_query(plan, key)
            q.enabled = not q.enabled
            return f"{'enabled' if q.enabled else 'disabled'} query {key}"
        if op == "move_query":
            records.move_query(plan, key, data["delta"])
            return f"moved query {key} {data['direction']}"
        if op == "settings":
            budget_names = tuple(records.Budgets.model_fields)
            plan.budgets = records.Budgets.model_construct(**pick(budget_names))
            plan.source_classes = list(data.get("source_classes", []))
            return "changed budgets and source classes"
        raise PlanEditError(f"Unknown edit {op!r}.")

    return edit


def check_update_plan_library(user: Any, plan: Plan, library: Library | None) -> bool:
    """Point the plan at another library (a plan field, not versioned); True if changed."""
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may edit plans.")
    if plan.library_id == (library.pk if library else None):
        return False
    plan.library = library
    plan.save(update_fields=["library", "updated_at"])
    return True


# --- runs -----------------------------------------------------------------------------


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
        "web_adapters": enabled_web_adapters(),
        "embedding_model": settings.EMBEDDING_MODEL or "all-MiniLM-L6-v2 (offline wheel)",
        "reranker_model": settings.RERANKER_MODEL or None,
        "nli_model": settings.NLI_MODEL or None,
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
    uses_library = any("library" in q.source_classes for _, q in content.enabled_queries())
    web = enabled_web_adapters()
    if plan.library is None and not web:
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


def check_start_run(user: Any, plan: Plan, base: int, *, enqueue: bool = True) -> Run:
    """Start a run of the current version; refuse (nothing created) when it cannot run.

    ``enqueue=False`` leaves the run for a synchronous driver (``runplan``) instead of
    the workers.
    """
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may start runs.")
    version = plan.current_version
    if version is None or version.number != base:
        raise PlanConflict(base, version.number if version else 0)
    content = parse_plan(version.content)
    problems = start_blockers(plan, content)
    if problems:
        raise PlanInvalid(problems)
    return do_start_run(user, version, content, enqueue=enqueue)


def do_start_run(
    user: Any, version: PlanVersion, content: PlanContent, *, enqueue: bool = True
) -> Run:
    from research import tasks

    with transaction.atomic():
        run = Run.objects.create(
            plan_version=version,
            created_by=user,
            config=run_config(version.plan),
            budgets=content.budgets.model_dump(),
        )
        if enqueue:
            tasks.defer_advance(run)
    return run


def do_request_cancel(user: Any, run: Run) -> Run:
    """Ask a run to stop at its next safe point (a queued run stops at once)."""
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may cancel runs.")
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


# --- what the run's stages write ------------------------------------------------------


def do_record_search_hits(
    run: Run, *, query_key: str, query_text: str, adapter: str, hits: Sequence[FoundHit]
) -> int:
    """Store one query's results; rows already written by an earlier attempt are kept."""
    query = Query.objects.filter(plan_version_id=run.plan_version_id, key=query_key).first()
    rows = [
        SearchHit(
            run=run,
            query=query,
            query_text=query_text,
            adapter=adapter,
            rank=hit.rank,
            raw_score=hit.score,
            canonical_id=hit.canonical_id[:600],
            source_id=hit.source_id,
            record=hit.record,
        )
        for hit in hits
    ]
    SearchHit.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def do_link_hits_to_source(run: Run, canonical_id: str, source_id: int) -> int:
    """Point a run's hits for one canonical id at the Source that ingesting them made."""
    return SearchHit.objects.filter(run=run, canonical_id=canonical_id).update(source_id=source_id)
