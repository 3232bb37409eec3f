"""Plans and their versions: who may see and change them, and every edit as a new version.

Access: a plan is visible to its owner and members (strangers get 404). Researchers
and staff create plans; on a plan, its owner and members with the *researcher* role
edit, start and cancel, *reviewers* decide on claims and *viewers* only read (403 for
what their role does not allow). Members: :mod:`research.services.members`.
Every edit makes a new immutable PlanVersion, and an edit based on a version
that is no longer current is refused with :class:`PlanConflict`, never merged silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404

from ledger.models import Library
from ledger.services.library import library_choices_for_plan
from research.models import Plan, PlanRole, PlanVersion, Run
from research.pipeline import planner, records
from research.pipeline.records import (
    PlanContent,
    PlanEditError,
    PlanSchemaError,
    edited,
    parse_plan,
    question_problems,
)
from research.roles import can_edit_plans, check_edit_plan_access

MAX_SCOPE_CHARS = 2000  # a scope says what the research covers; background goes elsewhere


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


# --- access ---------------------------------------------------------------------------


def plans_for_user(user: User) -> QuerySet[Plan]:
    plans = Plan.objects.all()
    if not user.is_superuser:
        plans = plans.filter(Q(owner=user) | Q(members=user)).distinct()
    return plans


def get_plan_for_user(user: User, code: UUID) -> Plan:
    """A plan the user may see; strangers get 404, never a hint that it exists."""
    plan = plans_for_user(user).filter(code=code).first()
    if plan is None:
        raise Http404("No such plan")
    return plan


def get_editable_plan_for_user(user: User, code: UUID) -> Plan:
    """A plan the user may change: 404 for strangers, 403 for viewers and reviewers."""
    plan = get_plan_for_user(user, code)
    check_edit_plan_access(user, plan)
    return plan


def get_owned_plan_for_user(user: Any, code: UUID) -> Plan:
    """A plan whose members the user manages: 404 for strangers, 403 for members."""
    plan = get_plan_for_user(user, code)
    if plan.role_of(user) != PlanRole.OWNER:
        raise PermissionDenied("Only the plan's owner adds, changes and removes members.")
    return plan


def get_run_for_user(user: User, code: UUID) -> Run:
    run = Run.objects.select_related("plan_version__plan").filter(code=code).first()
    if run is None or not run.plan_version.plan.is_visible_to(user):
        raise Http404("No such run")
    return run


# --- plans ----------------------------------------------------------------------------


def current_content(plan: Plan) -> PlanContent:
    assert plan.current_version is not None
    return parse_plan(plan.current_version.content)


def check_create_plan(
    user: User, question: str, scope: str = "", library: Library | None = None
) -> Plan:
    """Propose a plan for a question and save it as version 1, or raise PlanInvalid."""
    if not can_edit_plans(user):
        raise PermissionDenied("Only researchers may create plans.")
    problems = question_problems(question)
    if len(scope) > MAX_SCOPE_CHARS:
        problems.append(f"The scope is limited to {MAX_SCOPE_CHARS:,} characters.")
    if library is not None and not library_choices_for_plan(user).filter(pk=library.pk).exists():
        problems.append("You may not search that library: it has not been shared with you.")
    if problems:
        raise PlanInvalid(problems)
    from research.providers.llm import LLMClient

    try:
        content = planner.propose_plan(question, LLMClient.from_settings())
    except PlanSchemaError as exc:
        raise PlanInvalid(exc.messages) from exc
    return do_create_plan(user, content, scope=scope, library=library)


def do_create_plan(
    user: User, content: PlanContent, scope: str = "", library: Library | None = None
) -> Plan:
    with transaction.atomic():
        plan = Plan.objects.create(
            owner=user, question=content.question, scope=scope, library=library
        )
        PlanVersion.create_next(plan, content.dump(), user, note=f"proposed by {content.planner}")
    return plan


def check_save_plan(
    user: User, plan: Plan, base: int, content: PlanContent | dict[str, Any], note: str
) -> PlanVersion:
    """Save an edited plan as the next version, if ``base`` is still the current one."""
    check_edit_plan_access(user, plan)
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
    user: User,
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
        if op == "delete_subquestion":
            text = records.delete_subquestion(plan, key)
            return f"deleted subquestion {key} ({text[:60]})"
        if op == "delete_query":
            text = records.delete_query(plan, key)
            return f"deleted query {key} ({text[:60]})"
        if op == "scope":
            return "scope"  # a plan field, not versioned: check_update_plan_scope saves it
        if op == "toggle_query":
            _, q = records.find_query(plan, key)
            q.enabled = not q.enabled
            return f"{'enabled' if q.enabled else 'disabled'} query {key}"
        if op == "move_query":
            records.move_query(plan, key, data["delta"])
            return f"moved query {key} {data['direction']}"
        if op == "settings":
            budget_names = tuple(records.Budgets.model_fields)
            given = {k: v for k, v in pick(budget_names).items() if v is not None}
            plan.budgets = records.Budgets.model_construct(**{**plan.budgets.model_dump(), **given})
            plan.source_classes = list(data.get("source_classes", []))
            return "changed budgets and source classes"
        raise PlanEditError(f"Unknown edit {op!r}.")

    return edit


def check_update_plan_scope(user: User, plan: Plan, scope: str) -> bool:
    """Change the plan's scope (a plan field, read by the next run); True if changed."""
    check_edit_plan_access(user, plan)
    scope = scope.strip()
    if len(scope) > MAX_SCOPE_CHARS:
        raise PlanInvalid([f"The scope is limited to {MAX_SCOPE_CHARS:,} characters."])
    if plan.scope == scope:
        return False
    plan.scope = scope
    plan.save(update_fields=["scope", "updated_at"])
    return True


def check_update_plan_library(user: User, plan: Plan, library: Library | None) -> bool:
    """Point the plan at another library (a plan field, not versioned); True if changed.

    The library must be one the user may choose (public, theirs or shared with them):
    pointing a plan at a library shares it with the plan's members.
    """
    check_edit_plan_access(user, plan)
    if plan.library_id == (library.pk if library else None):
        return False
    if library is not None and not library_choices_for_plan(user).filter(pk=library.pk).exists():
        raise PlanInvalid(["You may not search that library: it has not been shared with you."])
    plan.library = library
    plan.save(update_fields=["library", "updated_at"])
    return True
