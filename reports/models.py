"""Report versions of a run and the record of every export of one."""

from __future__ import annotations

from uuid import uuid4

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone


class Report(models.Model):
    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    run = models.ForeignKey("research.Run", on_delete=models.PROTECT, related_name="reports")
    version = models.PositiveIntegerField()
    synthesizer = models.CharField(max_length=60)
    outline = models.JSONField(default=dict)
    markdown = models.TextField()
    content_hash = models.CharField(max_length=64)
    claim_codes = models.JSONField(default=list, help_text="Approved capsules it was built from.")
    check_findings = models.JSONField(default=list, blank=True)
    audited = models.JSONField(
        default=dict,
        blank=True,
        help_text="An audit run's audited report as it stood at this version "
        "(review.audited.AuditedReport); empty for a research run.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, help_text="The document's date.")

    class Meta:
        ordering = ["run", "version"]
        constraints = [
            models.UniqueConstraint(fields=["run", "version"], name="report_unique_version")
        ]

    def __str__(self) -> str:
        return f"report v{self.version} of {self.run_id}"

    def get_absolute_url(self) -> str:
        return reverse("review-show-report", args=[self.code])


class Export(models.Model):
    report = models.ForeignKey(Report, on_delete=models.CASCADE, related_name="exports")
    format = models.CharField(max_length=10)
    content_hash = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["report", "created_at"]

    def __str__(self) -> str:
        return f"{self.format} export of {self.report_id}"
