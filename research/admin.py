from __future__ import annotations

from django.contrib import admin

from research.models import (
    ImportedReport,
    Plan,
    PlanMember,
    PlanVersion,
    Query,
    Run,
    StageCheckpoint,
    Subquestion,
)


class PlanMemberInline(admin.TabularInline):  # type: ignore[type-arg]
    model = PlanMember
    fk_name = "plan"
    raw_id_fields = ["user", "added_by"]
    extra = 0


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin[Plan]):
    list_display = ["question", "owner", "created_at"]
    search_fields = ["question"]
    raw_id_fields = ["current_version", "library"]
    inlines = [PlanMemberInline]


@admin.register(PlanMember)
class PlanMemberAdmin(admin.ModelAdmin[PlanMember]):
    list_display = ["plan", "user", "role", "added_at"]
    list_filter = ["role"]
    raw_id_fields = ["plan", "user", "added_by"]


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Immutable records: visible in the admin, never edited there."""

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(PlanVersion)
class PlanVersionAdmin(ReadOnlyAdmin):
    list_display = ["plan", "number", "content_hash", "created_at"]


@admin.register(ImportedReport)
class ImportedReportAdmin(ReadOnlyAdmin):
    list_display = ["plan", "filename", "format", "imported_at"]
    exclude = ["parsed"]


@admin.register(Subquestion)
class SubquestionAdmin(ReadOnlyAdmin):
    list_display = ["text", "dimension", "plan_version", "enabled"]


@admin.register(Query)
class QueryAdmin(ReadOnlyAdmin):
    list_display = ["text", "query_class", "plan_version", "enabled"]
    list_filter = ["query_class"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin[Run]):
    list_display = ["code", "state", "plan_version", "created_at"]
    list_filter = ["state"]
    readonly_fields = ["config", "config_hash", "counters"]


@admin.register(StageCheckpoint)
class StageCheckpointAdmin(admin.ModelAdmin[StageCheckpoint]):
    list_display = ["run", "stage", "round", "status", "done", "total"]
    list_filter = ["stage", "status"]
