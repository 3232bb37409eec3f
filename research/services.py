"""Operations on plans and runs; views, commands and tasks call these."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import Q, QuerySet
from django.http import Http404

from research.models import Plan, Run


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


def get_run_for_user(user: Any, code: UUID) -> Run:
    run = Run.objects.select_related("plan_version__plan").filter(code=code).first()
    if run is None or not run.plan_version.plan.is_visible_to(user):
        raise Http404("No such run")
    return run
