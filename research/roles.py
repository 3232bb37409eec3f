"""Who may do what, by group: the roles every app checks (no app above it is imported)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth.models import User

if TYPE_CHECKING:
    from research.models import Plan

RESEARCHER_GROUP = "researcher"


def can_edit_plans(user: User) -> bool:
    """Researchers and staff may create plans and add documents."""
    return bool(
        user.is_staff or user.is_superuser or user.groups.filter(name=RESEARCHER_GROUP).exists()
    )


def can_edit_plan(user: User, plan: Plan) -> bool:
    """On one plan: its owner and members with the researcher role edit, start, cancel."""
    from research.models import PlanRole

    return plan.role_of(user) in (PlanRole.OWNER, PlanRole.RESEARCHER)


def check_edit_plan_access(user: User, plan: Plan) -> None:
    """403 unless the user may edit and run this plan."""
    from django.core.exceptions import PermissionDenied

    if not can_edit_plan(user, plan):
        raise PermissionDenied(
            "Your role on this plan is to read or review it; its owner or a member "
            "with the researcher role edits and runs it."
        )
