from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from ledger.models import Library
from ledger.services.library import library_choices_for_plan
from research import forms, services
from research.http import AuthedHttpRequest
from research.models import Plan, PlanVersion, Run
from research.pipeline.claims.scope import parse_scope
from research.pipeline.records import (
    QUERY_CLASSES,
    SOURCE_CLASSES,
    diff_plans,
    find_query,
    find_subquestion,
    parse_plan,
)


@require_GET
def home(request: AuthedHttpRequest) -> HttpResponse:
    return redirect("research-list-plans")


@require_GET
@login_not_required
def healthz(request: AuthedHttpRequest) -> HttpResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


@require_GET
def list_plans(request: AuthedHttpRequest) -> HttpResponse:
    plans = services.plans_for_user(request.user).select_related("current_version", "library")
    ctx = {"plans": plans, "can_edit": services.can_edit_plans(request.user)}
    return render(request, "research/plan_list.html", ctx)


@require_http_methods(["GET", "POST"])
def create_plan(request: AuthedHttpRequest) -> HttpResponse:
    if not services.can_edit_plans(request.user):
        raise PermissionDenied("Only researchers may create plans.")
    form = forms.PlanCreateForm(
        request.user, request.POST or None, web_adapters=services.enabled_web_adapters()
    )
    if request.method == "POST" and form.is_valid():
        try:
            plan = services.check_create_plan(request.user, **form.cleaned_data)
        except services.PlanInvalid as exc:
            for problem in exc.messages:
                form.add_error("question", problem)
        else:
            return redirect(plan)
    status = 400 if form.errors else 200
    ctx = {"form": form, "web_adapters": services.enabled_web_adapters()}
    return render(request, "research/plan_new.html", ctx, status=status)


@require_http_methods(["GET", "POST"])
def import_report(request: AuthedHttpRequest) -> HttpResponse:
    """Audit a report: import it as an audit plan; a report that cannot be read is refused
    in words, and what was pasted stays in the form."""
    if not services.can_edit_plans(request.user):
        raise PermissionDenied("Only researchers may import reports.")
    form = forms.ReportImportForm(request.user, request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            plan = services.check_import_report(
                request.user,
                data["data"],
                format=data["format"],
                filename=data["filename"],
                library=data.get("library"),
            )
        except services.PlanInvalid as exc:
            for problem in exc.messages:
                form.add_error(None, problem)
        else:
            return redirect(plan)
    status = 400 if form.errors else 200
    return render(request, "research/plan_audit.html", {"form": form}, status=status)


# --- the plan page and its editor -----------------------------------------------------


def editor_context(request: AuthedHttpRequest, plan: Plan, **extra: Any) -> dict[str, Any]:
    """Everything the plan page and its ``plan-editor`` partial render."""
    version = plan.current_version
    assert version is not None
    content = parse_plan(version.content)
    blockers = services.start_blockers(plan, content)
    return {
        "plan": plan,
        "version": version,
        "content": content,
        "can_edit": services.can_edit_plan(request.user, plan),
        "role": plan.role_of(request.user),
        "members": services.plan_members(plan),
        "share_form": forms.ShareForm(),
        "query_classes": QUERY_CLASSES,
        "source_classes": SOURCE_CLASSES,
        "libraries": _library_choices(request, plan),
        "blockers": blockers,
        "scope": parse_scope(plan.scope),
        "imported": services.imported_summary(plan) if plan.kind == "audit" else None,
        "editing": request.GET.get("edit", ""),
        "runs": Run.objects.filter(plan_version__plan=plan)
        .select_related("plan_version", "diff")
        .prefetch_related("reports")[:50],
        **extra,
    }


def _library_choices(request: AuthedHttpRequest, plan: Plan) -> list[Library]:
    """Libraries the editor may pick, plus the plan's current one (shown even if not)."""
    choices = list(library_choices_for_plan(request.user).order_by("name"))
    if plan.library is not None and plan.library not in choices:
        choices.append(plan.library)
    return choices


def render_editor(
    request: AuthedHttpRequest, plan: Plan, status: int = 200, **extra: Any
) -> HttpResponse:
    """The whole page, or only the editor for htmx (htmx swaps only 2xx answers), with the
    page's header out of band: a save changes the version it names."""
    ctx = editor_context(request, plan, **extra)
    if request.htmx:
        return render(request, "research/plan_detail.html#plan-editor", {**ctx, "oob": True})
    return render(request, "research/plan_detail.html", ctx, status=status)


@require_GET
def show_plan(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    plan = services.get_plan_for_user(request.user, code)
    return render_editor(request, plan)


@require_GET
def show_edit_form(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """An inline edit form (htmx); without htmx the page opens with that form."""
    plan = services.get_editable_plan_for_user(request.user, code)
    key = request.GET.get("key", "")
    if not request.htmx:
        return redirect(f"{plan.get_absolute_url()}?edit={key}#item-{key}")
    ctx = editor_context(request, plan, editing=key)
    content = ctx["content"]
    try:
        if request.GET.get("kind") == "query":
            ctx["sq"], ctx["q"] = find_query(content, key)
            return render(request, "research/plan_detail.html#query-edit", ctx)
        ctx["sq"] = find_subquestion(content, key)
    except ValueError as exc:
        return HttpResponse(format_html('<p class="error">{}</p>', exc))
    return render(request, "research/plan_detail.html#subquestion-edit", ctx)


@require_POST
def edit_plan(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """One endpoint for every editor form; ``op`` names the edit."""
    plan = services.get_editable_plan_for_user(request.user, code)
    op = request.POST.get("op", "")
    form_class = forms.EDIT_FORMS.get(op)
    if form_class is None:
        return render_editor(request, plan, 400, problems=[f"Unknown edit {op!r}."])
    form = form_class(request.POST)
    if not form.is_valid():
        return _refused(request, plan, op, form, forms.errors_in_words(form))
    data = {**form.cleaned_data, "delta": getattr(form, "delta", 0) if op.startswith("move") else 0}
    base = form.cleaned_data["base_version"]
    try:
        before = plan.current_version.number if plan.current_version else 0
        version = services.check_edit_plan(request.user, plan, base, services.plan_edit(op, data))
        moved = op == "settings" and services.check_update_plan_library(
            request.user, plan, form.cleaned_data.get("library")
        )
        scoped = op == "scope" and services.check_update_plan_scope(
            request.user, plan, form.cleaned_data.get("scope", "")
        )
    except services.PlanConflict as exc:
        return _refused(request, plan, op, form, [str(exc)], conflict=True, status=409)
    except services.PlanInvalid as exc:
        return _refused(request, plan, op, form, exc.messages)
    saved = f"Saved version {version.number}: {version.note}." if version.number != before else ""
    notice = saved or (
        "Library changed."
        if moved
        else "Scope changed: the next run applies it."
        if scoped
        else "Nothing changed."
    )
    if not request.htmx:
        messages.success(request, notice)
        return redirect(plan)
    plan.refresh_from_db()
    return render_editor(request, plan, notice=notice)


def _refused(
    request: AuthedHttpRequest,
    plan: Plan,
    op: str,
    form: Any,
    problems: list[str],
    *,
    conflict: bool = False,
    status: int = 400,
) -> HttpResponse:
    """Re-render the editor with the problems and the user's own input, unsaved."""
    plan.refresh_from_db()
    data = request.POST.copy()
    if conflict and plan.current_version:
        data["base_version"] = str(plan.current_version.number)  # one click re-applies
    pending = {"op": op, "form": type(form)(data), "conflict": conflict}
    return render_editor(request, plan, status, problems=problems, pending=pending)


# --- members ----------------------------------------------------------------------------


@require_POST
def share_plan(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    """The owner adds a member with a role, or changes a member's role."""
    plan = services.get_owned_plan_for_user(request.user, code)
    form = forms.ShareForm(request.POST)
    if not form.is_valid():
        return render_editor(request, plan, 400, problems=forms.errors_in_words(form))
    try:
        member = services.check_share_plan(request.user, plan, **form.cleaned_data)
    except services.PlanInvalid as exc:
        return render_editor(request, plan, 400, problems=exc.messages)
    notice = f"{member.user.get_username()} is now a {member.role} of this plan."
    return _after_members_change(request, plan, notice)


@require_POST
def unshare_plan(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    plan = services.get_owned_plan_for_user(request.user, code)
    form = forms.UnshareForm(request.POST)
    username = form.cleaned_data["username"] if form.is_valid() else ""
    removed = services.check_unshare_plan(request.user, plan, username)
    notice = f"{username} was removed from this plan." if removed else "Nobody was removed."
    return _after_members_change(request, plan, notice)


def _after_members_change(request: AuthedHttpRequest, plan: Plan, notice: str) -> HttpResponse:
    if request.htmx:
        return render_editor(request, plan, notice=notice)
    messages.success(request, notice)
    return redirect(plan)


# --- versions ---------------------------------------------------------------------------


@require_GET
def diff_plan(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    plan = services.get_plan_for_user(request.user, code)
    versions = list(plan.versions.select_related("created_by").order_by("-number"))
    form = forms.DiffForm(request.GET or None)
    changes = None
    pair: tuple[PlanVersion, PlanVersion] | None = None
    if form.is_valid():
        by_number = {v.number: v for v in versions}
        a, b = by_number.get(form.cleaned_data["a"]), by_number.get(form.cleaned_data["b"])
        if a is None or b is None:
            form.add_error(None, "Pick two versions that exist.")
        else:
            pair = (a, b)
            changes = diff_plans(parse_plan(a.content), parse_plan(b.content))
    ctx = {"plan": plan, "versions": versions, "form": form, "changes": changes, "pair": pair}
    return render(request, "research/plan_versions.html", ctx)


# --- runs ---------------------------------------------------------------------------------


@require_POST
def start_run(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    plan = services.get_editable_plan_for_user(request.user, code)
    form = forms.StartRunForm(request.POST)
    if not form.is_valid():
        return render_editor(request, plan, 400, problems=forms.errors_in_words(form))
    try:
        run = services.check_start_run(request.user, plan, form.cleaned_data["base_version"])
    except services.PlanConflict as exc:
        return render_editor(request, plan, 409, problems=[str(exc)])
    except services.PlanInvalid as exc:
        return render_editor(request, plan, 400, problems=exc.messages)
    url = run.get_absolute_url()
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def run_context(run: Run) -> dict[str, Any]:
    return {"run": run, "checkpoints": run.checkpoints.all()}


@require_GET
def show_run(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = services.get_run_for_user(request.user, code)
    ctx = {
        **run_context(run),
        "can_edit": services.can_edit_plan(request.user, run.plan_version.plan),
    }
    return render(request, "research/run_detail.html", ctx)


@require_POST
def cancel_run(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = services.get_run_for_user(request.user, code)
    try:
        run = services.do_request_cancel(request.user, run)
    except services.RunRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Cancel requested: the run stops at its next safe point.")
    if request.htmx:
        return render(request, "research/run_detail.html#run-status", run_context(run))
    return redirect(reverse("research-show-run", args=[run.code]))
