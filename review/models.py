"""Review decisions (append-only audit trail), gate policies and run diffs."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Now

from review.records import Reverification


class AppendOnlyError(Exception):
    pass


class AppendOnlyQuerySet(models.QuerySet["ReviewDecision"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("review decisions cannot be changed")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("review decisions cannot be deleted")


class Action(models.TextChoices):
    APPROVE = "approve"
    NARROW = "narrow"
    REJECT = "reject"


class ReviewDecision(models.Model):
    """One reviewer's decision on one claim. Rows are never edited or deleted
    (enforced here and by a database trigger)."""

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    claim = models.ForeignKey("ledger.Claim", on_delete=models.PROTECT, related_name="decisions")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="review_decisions"
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    text_before = models.TextField()
    text_after = models.TextField()
    reason_code = models.CharField(max_length=40, blank=True)
    reason = models.TextField(blank=True)
    allowed_scope = models.TextField(blank=True)
    prohibited_overstatements = models.JSONField(default=list, blank=True)
    claim_version = models.PositiveIntegerField(help_text="Claim version the reviewer saw.")
    reverification = models.JSONField(default=dict, blank=True)
    carried_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="carried_to",
        help_text="The earlier run's decision this one carries over (claim unchanged).",
    )
    # An approval against the verifier's verdict (FAIL, UNCERTAIN or UNVERIFIABLE): the
    # reviewer's last word, always with a written reason, marked everywhere it shows.
    override = models.BooleanField(default=False)
    verdict_at_decision = models.CharField(
        max_length=12, blank=True, help_text="The claim's verdict when it was decided."
    )
    # Dated by the database, never by the client: a trigger refuses any other time
    # (migration 0006), so no role can write a back-dated decision.
    created_at = models.DateTimeField(db_default=Now(), editable=False)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["claim", "created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "claim_version"], name="decision_unique_claim_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.reviewer_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise AppendOnlyError("review decisions cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("review decisions cannot be deleted")

    @property
    def reverified(self) -> Reverification:
        """A narrowing's re-verification, parsed from ``reverification`` (unavailable,
        with no reason, on a decision that re-verified nothing)."""
        return Reverification.from_json(self.reverification or {})


class GatePolicy(models.Model):
    DEFAULT_QUORUM = 2

    plan = models.OneToOneField("research.Plan", on_delete=models.CASCADE, related_name="gate")
    require_second_reviewer = models.BooleanField(
        default=False, help_text="Whoever narrowed a high-impact claim cannot approve it."
    )
    high_impact_types = models.JSONField(default=list, blank=True)
    allow_bulk_approve = models.BooleanField(default=True)
    verifier_quorum = models.PositiveSmallIntegerField(
        default=DEFAULT_QUORUM,
        validators=[MinValueValidator(1), MaxValueValidator(6)],
        help_text="Distinct verifier families that must support a claim for PASS.",
    )
    override_second_reviewer = models.BooleanField(
        default=False,
        help_text="An override (approving a FAIL, UNCERTAIN or UNVERIFIABLE claim) needs a "
        "second reviewer to confirm it.",
    )

    def __str__(self) -> str:
        return f"gate for {self.plan_id}"


class RunDiff(models.Model):
    """What changed since an earlier run of the plan, stored when a run reaches review.

    ``data`` is a ``review.diff.RunDiffRecord`` (claims added / removed / changed, verdict
    flips, evidence changed, sources new / gone / changed, decisions carried over and
    claims that need review), parsed at this boundary by ``record``.
    """

    run = models.OneToOneField("research.Run", on_delete=models.CASCADE, related_name="diff")
    against = models.ForeignKey(
        "research.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    data = models.JSONField()
    carried_over = models.PositiveIntegerField(default=0)
    needs_review = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"diff of {self.run_id} against {self.against_id}"
