from __future__ import annotations

from django.contrib import admin

from reports.models import Export, Report
from research.admin import ReadOnlyAdmin


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    list_display = ["run", "version", "synthesizer", "content_hash", "created_at"]


@admin.register(Export)
class ExportAdmin(ReadOnlyAdmin):
    list_display = ["report", "format", "size", "created_at"]
