"""Who may read a plan's claims and who may decide on them."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.core.exceptions import PermissionDenied
from django.http import Http404

from ledger.models import Claim
from research.models import Plan, PlanRole

REVIEWER_GROUP = "reviewer"


def is_reviewer(user: Any) -> bool:
    return bool(user.is_superuser or user.groups.filter(name=REVIEWER_GROUP).exists())


def can_decide(user: Any, plan: Plan) -> bool:
    """A plan's reviewers decide: members with the reviewer role, and its owner or a
    superuser when they are in the site's reviewer group."""
    role = plan.role_of(user)
    if role == PlanRole.REVIEWER:
        return True
    return role == PlanRole.OWNER and is_reviewer(user)


def get_claim_for_user(user: Any, code: UUID, *, write: bool = False) -> Claim:
    """A claim of a plan the user may see: strangers get 404, non-reviewers 403 on write."""
    claim = (
        Claim.objects.select_related("run__plan_version__plan", "subquestion")
        .filter(code=code)
        .first()
    )
    if claim is None or not claim.run.plan_version.plan.is_visible_to(user):
        raise Http404("No such claim")
    if write:
        check_decide(user, claim)
    return claim


def check_decide(user: Any, claim: Claim) -> None:
    if not can_decide(user, claim.run.plan_version.plan):
        raise PermissionDenied(
            "Only the plan's reviewers decide on its claims; ask its owner for the reviewer role."
        )
