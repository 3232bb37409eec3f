"""Plans, immutable plan versions, their subquestions and queries, and runs."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from uuid import uuid4

from django.conf import settings
from django.db import models, transaction
from django.urls import reverse


def content_hash(payload: Any) -> str:
    """sha256 of canonical JSON: the identity of a plan version or a run config."""
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class QueryClass(models.TextChoices):
    DEFINITION = "definition"
    MECHANISM = "mechanism"
    PROVENANCE = "provenance"
    BENCHMARK = "benchmark"
    IMPLEMENTATION = "implementation"
    LIMITATION = "limitation"
    COMPARISON = "comparison"
    COUNTER_EVIDENCE = "counter-evidence"
    TEMPORAL = "temporal"
    SOURCE_SPECIFIC = "source-specific"


class PlanKind(models.TextChoices):
    RESEARCH = "research", "Research a question"
    AUDIT = "audit", "Audit a report"


class Plan(models.Model):
    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    kind = models.CharField(
        max_length=10,
        choices=PlanKind.choices,
        default=PlanKind.RESEARCH,
        help_text="Research a question, or audit a report another engine wrote.",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_plans"
    )
    members: models.ManyToManyField[Any, PlanMember] = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        through="PlanMember",
        through_fields=("plan", "user"),
        blank=True,
        related_name="plans",
        help_text="People besides the owner who may see this plan, each with a role.",
    )
    question = models.TextField()
    scope = models.TextField(blank=True)
    constraints = models.JSONField(default=dict, blank=True)
    library = models.ForeignKey(
        "ledger.Library", null=True, blank=True, on_delete=models.SET_NULL, related_name="plans"
    )
    current_version = models.ForeignKey(
        "PlanVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.question[:80]

    def get_absolute_url(self) -> str:
        return reverse("research-show-plan", args=[self.code])

    def is_visible_to(self, user: Any) -> bool:
        return self.role_of(user) is not None

    def role_of(self, user: Any) -> str | None:
        """``owner`` (also for superusers), the member's role, or None for a stranger."""
        if not getattr(user, "is_authenticated", False) or not user.is_active:
            return None
        if user.is_superuser or user.pk == self.owner_id:
            return PlanRole.OWNER
        role = PlanMember.objects.filter(plan=self, user=user).values_list("role", flat=True)
        return role.first()


class ImportedReport(models.Model):
    """The report an audit plan audits: the text as imported and the parse of it.

    ``parsed`` is ``research.pipeline.audit.ParsedReport.to_json()``: its sentences, the
    citations each carries and the problems found in them (dangling markers, references
    without a link), read by the audit stages and the audited report.
    """

    plan = models.OneToOneField(Plan, on_delete=models.CASCADE, related_name="imported_report")
    filename = models.CharField(max_length=255, blank=True)
    format = models.CharField(max_length=10, help_text="markdown, html, text or json.")
    text = models.TextField(help_text="The report as imported (decoded, unchanged).")
    sha256 = models.CharField(max_length=64)
    parsed = models.JSONField()
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"report of {self.plan_id} ({self.format})"


class PlanRole(models.TextChoices):
    """What a member may do with one plan (its owner may do everything)."""

    OWNER = "owner"
    VIEWER = "viewer", "viewer (reads the plan, its runs and ledger)"
    RESEARCHER = "researcher", "researcher (also edits and runs it)"
    REVIEWER = "reviewer", "reviewer (also decides on its claims)"


MEMBER_ROLES = [PlanRole.VIEWER, PlanRole.RESEARCHER, PlanRole.REVIEWER]


class PlanMember(models.Model):
    """A person the owner shared the plan with, and the role they have on it."""

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="plan_memberships"
    )
    role = models.CharField(
        max_length=12,
        choices=[(r.value, r.label) for r in MEMBER_ROLES],
        default=PlanRole.VIEWER,
    )
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["plan", "added_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "user"], name="planmember_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} as {self.role} on {self.plan_id}"


class PlanVersion(models.Model):
    """An immutable snapshot of a plan's research graph; every save makes a new one."""

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    content = models.JSONField(help_text="Subquestions, queries, source classes, budgets.")
    content_hash = models.CharField(max_length=64, db_index=True)
    note = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["plan", "number"]
        constraints = [
            models.UniqueConstraint(fields=["plan", "number"], name="planversion_unique_number")
        ]

    def __str__(self) -> str:
        return f"{self.plan_id} v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("PlanVersion is immutable; create a new version instead")
        self.content_hash = content_hash(self.content)
        super().save(*args, **kwargs)

    @classmethod
    def create_next(
        cls, plan: Plan, content: dict[str, Any], user: Any, note: str = ""
    ) -> PlanVersion:
        """Append a version and materialize its subquestions and queries."""
        with transaction.atomic():
            locked = Plan.objects.select_for_update().get(pk=plan.pk)
            parent = locked.current_version
            number = (parent.number + 1) if parent else 1
            version = cls(
                plan=locked,
                number=number,
                parent=parent,
                content=content,
                created_by=user,
                note=note,
            )
            version.save()
            version.materialize()
            locked.current_version = version
            locked.save(update_fields=["current_version", "updated_at"])
            plan.current_version = version
        return version

    def materialize(self) -> None:
        for s_pos, sq in enumerate(self.content.get("subquestions", [])):
            sub = Subquestion.objects.create(
                plan_version=self,
                key=sq["key"],
                text=sq["text"],
                dimension=sq.get("dimension", ""),
                priority=sq.get("priority", 0),
                enabled=sq.get("enabled", True),
                position=s_pos,
            )
            Query.objects.bulk_create(
                Query(
                    plan_version=self,
                    subquestion=sub,
                    key=q["key"],
                    text=q["text"],
                    query_class=q["query_class"],
                    priority=q.get("priority", 0),
                    enabled=q.get("enabled", True),
                    position=q_pos,
                    source_classes=q.get("source_classes", []),
                )
                for q_pos, q in enumerate(sq.get("queries", []))
            )


class Subquestion(models.Model):
    """A node of a plan version's research graph (immutable with its version)."""

    plan_version = models.ForeignKey(
        PlanVersion, on_delete=models.CASCADE, related_name="subquestions"
    )
    key = models.CharField(max_length=40, help_text="Stable across versions of one plan.")
    text = models.TextField()
    dimension = models.CharField(max_length=60, blank=True)
    priority = models.IntegerField(default=0)
    enabled = models.BooleanField(default=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["plan_version", "position"]
        constraints = [
            models.UniqueConstraint(fields=["plan_version", "key"], name="subquestion_unique_key")
        ]

    def __str__(self) -> str:
        return self.text[:80]


class Query(models.Model):
    plan_version = models.ForeignKey(PlanVersion, on_delete=models.CASCADE, related_name="queries")
    subquestion = models.ForeignKey(Subquestion, on_delete=models.CASCADE, related_name="queries")
    key = models.CharField(max_length=40)
    text = models.TextField()
    query_class = models.CharField(max_length=32, choices=QueryClass.choices)
    priority = models.IntegerField(default=0)
    enabled = models.BooleanField(default=True)
    position = models.PositiveIntegerField(default=0)
    source_classes = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["subquestion", "position"]
        verbose_name_plural = "queries"
        constraints = [
            models.UniqueConstraint(fields=["plan_version", "key"], name="query_unique_key")
        ]

    def __str__(self) -> str:
        return f"[{self.query_class}] {self.text[:70]}"


class RunState(models.TextChoices):
    QUEUED = "queued"
    SEARCHING = "searching"
    INGESTING = "ingesting"
    INDEXING = "indexing"
    RETRIEVING = "retrieving"
    MINING = "mining"
    COUNTERING = "countering", "Gathering counter-evidence"
    VERIFYING = "verifying"
    AWAITING_REVIEW = "awaiting_review"
    SYNTHESIZING = "synthesizing"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


# The declared state machine: anything else raises InvalidTransition.
RUN_TRANSITIONS: dict[str, set[str]] = {
    RunState.QUEUED: {RunState.SEARCHING},
    RunState.SEARCHING: {RunState.INGESTING},
    RunState.INGESTING: {RunState.INDEXING},
    RunState.INDEXING: {RunState.RETRIEVING},
    RunState.RETRIEVING: {RunState.MINING, RunState.SEARCHING},  # best-first expansion
    RunState.MINING: {RunState.COUNTERING},
    RunState.COUNTERING: {RunState.VERIFYING},
    RunState.VERIFYING: {RunState.AWAITING_REVIEW},
    RunState.AWAITING_REVIEW: {RunState.SYNTHESIZING},
    RunState.SYNTHESIZING: {RunState.DONE, RunState.AWAITING_REVIEW},
    RunState.DONE: {RunState.SYNTHESIZING},  # a new report version after more review
    RunState.FAILED: set(),
    RunState.CANCELLED: set(),
}
TERMINAL_STATES = {RunState.DONE, RunState.FAILED, RunState.CANCELLED}
# States in which the run's ledger is complete: it can be reviewed and reported on.
REVIEWABLE_STATES = frozenset({RunState.AWAITING_REVIEW, RunState.SYNTHESIZING, RunState.DONE})


class InvalidTransition(Exception):
    pass


class Run(models.Model):
    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    plan_version = models.ForeignKey(PlanVersion, on_delete=models.PROTECT, related_name="runs")
    previous_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="next_runs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    config = models.JSONField(default=dict, help_text="Pipeline settings this run used.")
    config_hash = models.CharField(max_length=64)
    budgets = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.QUEUED)
    cancel_requested = models.BooleanField(default=False)
    counters = models.JSONField(default=dict, blank=True)
    stop_reason = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Runs listed per plan version, newest first (plan page, run diff picker).
            models.Index(fields=["plan_version", "-created_at"], name="run_version_created"),
        ]

    def __str__(self) -> str:
        return f"run {self.code} ({self.state})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.config_hash:
            self.config_hash = content_hash(self.config)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("research-show-run", args=[self.code])

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def latest_report(self) -> Any:
        """The run's newest report version (``reports.Report``), or None; reads prefetched
        reports when the caller prefetched them."""
        reports = list(self.reports.all())
        return max(reports, key=lambda report: report.version) if reports else None

    @property
    def is_reviewable(self) -> bool:
        """The ledger is complete: its claims can be reviewed and a report built."""
        return self.state in REVIEWABLE_STATES

    def can_transition(self, target: str) -> bool:
        if target in (RunState.FAILED, RunState.CANCELLED):
            return not self.is_terminal
        return target in RUN_TRANSITIONS[RunState(self.state)]

    def transition(self, target: str) -> None:
        if not self.can_transition(target):
            raise InvalidTransition(f"{self.state} -> {target} is not a declared transition")
        self.state = target
        self.save(update_fields=["state"])


# The stages a best-first follow-up round repeats (searching again after retrieving).
ROUND_STAGES = frozenset(
    {RunState.SEARCHING, RunState.INGESTING, RunState.INDEXING, RunState.RETRIEVING}
)


class StageStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


class StageCheckpoint(models.Model):
    """Progress and outcome of one stage of one run; a resumed run starts from here."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="checkpoints")
    stage = models.CharField(max_length=20, choices=RunState.choices)
    round = models.PositiveIntegerField(default=0, help_text="Best-first expansion round.")
    status = models.CharField(
        max_length=10, choices=StageStatus.choices, default=StageStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    counters = models.JSONField(default=dict, blank=True)
    notes = models.JSONField(
        default=dict,
        blank=True,
        help_text='What the stage could not do, in words (e.g. {"reranker": "none"}).',
    )
    cursor = models.JSONField(default=dict, blank=True, help_text="Where a resume picks up.")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "started_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "stage", "round"], name="checkpoint_unique_stage"
            )
        ]

    def __str__(self) -> str:
        return f"{self.stage}#{self.round} {self.status}"

    @property
    def label(self) -> str:
        """The stage's name on the run page; a best-first follow-up round says which.

        Only the stages the best-first loop repeats have rounds a reader can tell apart;
        mining, countering and verifying run once per run whatever its round number.
        """
        name = self.get_stage_display()
        if self.stage in ROUND_STAGES and self.round:
            return f"{name} (follow-up round {self.round})"
        return name

    @property
    def counts(self) -> list[tuple[str, Any]]:
        """The stage's counters other than its wall time, in stored order."""
        return [(key, value) for key, value in self.counters.items() if key != "wall_s"]
