from __future__ import annotations

from django.contrib import admin

from research.admin import ReadOnlyAdmin
from review.models import Export, GatePolicy, Report, ReviewDecision, RunDiff


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


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    list_display = ["run", "version", "synthesizer", "content_hash", "created_at"]


@admin.register(Export)
class ExportAdmin(ReadOnlyAdmin):
    list_display = ["report", "format", "size", "created_at"]


@admin.register(RunDiff)
class RunDiffAdmin(ReadOnlyAdmin):
    list_display = ["run", "against", "carried_over", "needs_review", "created_at"]
