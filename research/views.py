from __future__ import annotations

from uuid import UUID

from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from research import services
from research.http import AuthedHttpRequest
from research.models import Run


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
    plans = services.plans_for_user(request.user).select_related("current_version")
    return render(request, "research/plan_list.html", {"plans": plans})


@require_GET
def show_plan(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    plan = services.get_plan_for_user(request.user, code)
    runs = Run.objects.filter(plan_version__plan=plan).select_related("plan_version")
    return render(request, "research/plan_detail.html", {"plan": plan, "runs": runs})


@require_GET
def show_run(request: AuthedHttpRequest, code: UUID) -> HttpResponse:
    run = services.get_run_for_user(request.user, code)
    checkpoints = run.checkpoints.all()
    return render(request, "research/run_detail.html", {"run": run, "checkpoints": checkpoints})
