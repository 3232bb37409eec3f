"""Plan members: the owner shares a plan with people, each with a role (viewer,
researcher, reviewer), changes a role or removes a member, all from the plan page."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction

from research.models import MEMBER_ROLES, Plan, PlanMember, PlanRole
from research.services.plans import PlanInvalid


def plan_members(plan: Plan) -> list[PlanMember]:
    return list(plan.memberships.select_related("user").order_by("user__username"))


def check_share_plan(owner: Any, plan: Plan, username: str, role: str) -> PlanMember:
    """Add a member with a role, or change an existing member's role."""
    if plan.role_of(owner) != PlanRole.OWNER:
        raise PermissionDenied("Only the plan's owner adds members.")
    if role not in {r.value for r in MEMBER_ROLES}:
        raise PlanInvalid([f"Unknown role {role!r}: pick viewer, researcher or reviewer."])
    user = User.objects.filter(username=username.strip(), is_active=True).first()
    if user is None:
        raise PlanInvalid([f"No active user is named {username.strip()!r}."])
    if user.pk == plan.owner_id:
        raise PlanInvalid(["The owner already has every right on the plan."])
    return do_share_plan(owner, plan, user, role)


def do_share_plan(owner: Any, plan: Plan, user: Any, role: str) -> PlanMember:
    with transaction.atomic():
        member, created = PlanMember.objects.get_or_create(
            plan=plan, user=user, defaults={"role": role, "added_by": owner}
        )
        if not created and member.role != role:
            member.role = role
            member.save(update_fields=["role"])
    return member


def check_unshare_plan(owner: Any, plan: Plan, username: str) -> bool:
    """Remove a member; their open live-progress connections close at the next event."""
    if plan.role_of(owner) != PlanRole.OWNER:
        raise PermissionDenied("Only the plan's owner removes members.")
    deleted, _ = PlanMember.objects.filter(plan=plan, user__username=username).delete()
    return bool(deleted)
