from __future__ import annotations

from django.contrib import admin

from research.admin import ReadOnlyAdmin
from review.models import GatePolicy, ReviewDecision, RunDiff


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(ReadOnlyAdmin):
    """The audit trail: readable by staff, never added, changed or deleted here."""

    list_display = ["claim", "action", "reviewer", "created_at"]
    list_filter = ["action"]


@admin.register(GatePolicy)
class GatePolicyAdmin(admin.ModelAdmin[GatePolicy]):
    list_display = [
        "plan",
        "verifier_quorum",
        "override_second_reviewer",
        "require_second_reviewer",
        "allow_bulk_approve",
    ]


@admin.register(RunDiff)
class RunDiffAdmin(ReadOnlyAdmin):
    list_display = ["run", "against", "carried_over", "needs_review", "created_at"]
