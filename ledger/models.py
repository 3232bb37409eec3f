"""Sources, snapshots, passages, search hits, claims, evidence, votes and dispositions."""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.urls import reverse
from pgvector.django import HnswIndex, VectorField

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2; a model of another size needs a migration


class Library(models.Model):
    """A named collection of sources a plan may draw on (uploads, imported corpora).

    Private by default: its owner and members read it (members with ``write`` also add
    documents), and so do the members of a plan that searches it. A *public* library
    (an imported reference corpus) is readable by every signed-in user. A plan's web
    captures live in the plan's own library (``capture_for``), readable by its members
    and written only by its runs. Who may do what: ``ledger.services.library``.
    """

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="libraries",
    )
    public = models.BooleanField(
        default=False, help_text="Readable by every signed-in user (a reference corpus)."
    )
    capture_for = models.OneToOneField(
        "research.Plan",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="capture_library",
        help_text="The plan whose web captures this library holds.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "libraries"
        ordering = ["name"]
        constraints = [
            # One name per owner: another user's "notes" is another library.
            models.UniqueConstraint(
                fields=["owner", "name"], name="library_unique_name_per_owner", nulls_distinct=False
            )
        ]

    def __str__(self) -> str:
        return self.name


class LibraryAccess(models.TextChoices):
    READ = "read"
    WRITE = "write", "read and add documents"


class LibraryMember(models.Model):
    """A person, or a team (a group of users), the owner shared a library with."""

    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="library_memberships",
    )
    team = models.ForeignKey(
        "auth.Group",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="library_memberships",
    )
    access = models.CharField(
        max_length=6, choices=LibraryAccess.choices, default=LibraryAccess.READ
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["library", "added_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, team__isnull=True)
                | models.Q(user__isnull=True, team__isnull=False),
                name="librarymember_user_or_team",
            ),
            models.UniqueConstraint(fields=["library", "user"], name="librarymember_unique_user"),
            models.UniqueConstraint(fields=["library", "team"], name="librarymember_unique_team"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id or self.team_id} {self.access} {self.library_id}"


class SourceType(models.TextChoices):
    WEB = "web"
    PAPER = "paper"
    PREPRINT = "preprint"
    ENCYCLOPEDIA = "encyclopedia"
    NEWS = "news"
    DOCUMENTATION = "documentation"
    FILE = "file"
    DATASET = "dataset"
    OTHER = "other"


class Source(models.Model):
    """One canonical document identity; its captured content lives in snapshots."""

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    canonical_id = models.CharField(
        max_length=600,
        unique=True,
        help_text="doi:…, arxiv:…, url:<normalized>, corpus:<name>:<id> or sha256:<content>.",
    )
    url = models.TextField(blank=True)
    doi = models.CharField(max_length=255, blank=True, db_index=True)
    arxiv_id = models.CharField(max_length=64, blank=True, db_index=True)
    title = models.TextField(blank=True)
    publisher = models.CharField(max_length=300, blank=True)
    authors = models.JSONField(default=list, blank=True)
    source_type = models.CharField(
        max_length=20, choices=SourceType.choices, default=SourceType.OTHER
    )
    published_date = models.DateField(null=True, blank=True)
    cluster = models.CharField(
        max_length=64,
        blank=True,
        db_index=True,
        help_text="Near-duplicate cluster: copies of one story share it.",
    )
    minhash = models.BinaryField(null=True, blank=True, editable=False)
    lsh_bands = ArrayField(
        models.BigIntegerField(),
        default=list,
        blank=True,
        editable=False,
        help_text="MinHash LSH band keys (research.pipeline.neardup): shared key = candidate copy.",
    )
    libraries = models.ManyToManyField(Library, blank=True, related_name="sources")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Library page: title search with ILIKE '%term%'.
            GinIndex(name="source_title_trgm", fields=["title"], opclasses=["gin_trgm_ops"]),
            # Near-duplicate candidates at ingest: WHERE lsh_bands && %s::bigint[].
            GinIndex(name="source_lsh_bands_gin", fields=["lsh_bands"]),
        ]

    def __str__(self) -> str:
        return self.title[:80] or self.canonical_id

    def get_absolute_url(self) -> str:
        return reverse("ledger-show-source", args=[self.code])


class Snapshot(models.Model):
    """Immutable captured bytes and extracted text of a source at one moment."""

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="snapshots")
    raw = models.BinaryField(help_text="Captured bytes, zlib-compressed.")
    raw_sha256 = models.CharField(max_length=64)
    text = models.TextField()
    text_sha256 = models.CharField(max_length=64, db_index=True)
    content_type = models.CharField(max_length=120, blank=True)
    fetched_at = models.DateTimeField()
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    http_headers = models.JSONField(default=dict, blank=True)
    extractor = models.CharField(max_length=60)
    extractor_version = models.CharField(max_length=40, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["source", "fetched_at"]
        get_latest_by = "fetched_at"
        constraints = [
            # Re-capturing unchanged content reuses the snapshot.
            models.UniqueConstraint(fields=["source", "raw_sha256"], name="snapshot_unique_content")
        ]

    def __str__(self) -> str:
        return f"{self.source_id}@{self.text_sha256[:12]}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not kwargs.pop("allow_update", False):
            raise ValueError("Snapshot is immutable; capture a new snapshot instead")
        super().save(*args, **kwargs)


class UploadStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    ADDED = "added"
    DUPLICATE = "duplicate", "already in the library"
    FAILED = "failed"


class UploadKind(models.TextChoices):
    FILE = "file", "document"
    CORPUS = "corpus", "corpus (JSONL, BEIR or SciFact)"


class Upload(models.Model):
    """One uploaded file waiting for, or done with, ingestion (per-file result or error).

    A ``corpus`` upload is a JSONL file of many documents: its progress (documents done
    of total, when it started) is stored here after every ingest batch, so the page
    can show progress and an ETA that survive a reload.
    """

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="uploads")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    batch = models.UUIDField(db_index=True, help_text="Files sent in one request share it.")
    filename = models.CharField(max_length=255)
    content_type = models.CharField(max_length=120, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    raw = models.BinaryField(help_text="zlib-compressed bytes; emptied once ingested.")
    raw_sha256 = models.CharField(max_length=64)
    status = models.CharField(
        max_length=10, choices=UploadStatus.choices, default=UploadStatus.QUEUED
    )
    error_reason = models.CharField(max_length=40, blank=True)
    error = models.TextField(blank=True)
    source = models.ForeignKey(
        "Source", null=True, blank=True, on_delete=models.SET_NULL, related_name="uploads"
    )
    passages = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=6, choices=UploadKind.choices, default=UploadKind.FILE)
    documents_total = models.PositiveIntegerField(default=0)
    documents_done = models.PositiveIntegerField(default=0)
    report = models.JSONField(
        default=dict, blank=True, help_text="A corpus's counts per status and its bad lines."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "filename"]

    def __str__(self) -> str:
        return f"{self.filename} ({self.status})"

    @property
    def eta_s(self) -> float | None:
        """Seconds a running corpus upload still needs at its rate so far (None: unknown)."""
        if self.started_at is None or self.finished_at or not self.documents_done:
            return None
        from django.utils import timezone

        elapsed = (timezone.now() - self.started_at).total_seconds()
        left = max(0, self.documents_total - self.documents_done)
        return elapsed / self.documents_done * left


class PassageKind(models.TextChoices):
    SECTION = "section"
    CHUNK = "chunk"


class Passage(models.Model):
    """A span of a snapshot's text: ``snapshot.text[start:end] == text``."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="passages")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="passages")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    kind = models.CharField(max_length=10, choices=PassageKind.choices, default=PassageKind.CHUNK)
    ordinal = models.PositiveIntegerField(default=0)
    section_path = models.TextField(blank=True)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    page = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField()
    sentences = models.JSONField(
        default=list, blank=True, help_text="[[start, end], …] sentence offsets in snapshot text."
    )
    fingerprint = models.CharField(max_length=64, db_index=True)
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["snapshot", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "kind", "start", "end"], name="passage_unique_span"
            ),
            models.CheckConstraint(
                condition=models.Q(end__gte=models.F("start")), name="passage_span_ordered"
            ),
        ]
        indexes = [
            # Dense retrieval: ORDER BY embedding <=> %s LIMIT k (cosine distance).
            HnswIndex(
                name="passage_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # Ledger full-text on passages quoted as evidence: text ILIKE '%term%'.
            GinIndex(name="passage_text_trgm", fields=["text"], opclasses=["gin_trgm_ops"]),
        ]

    def __str__(self) -> str:
        return f"{self.snapshot_id}[{self.start}:{self.end}]"


class SearchHit(models.Model):
    """One result of one adapter for one query of one run, as returned (provenance)."""

    run = models.ForeignKey("research.Run", on_delete=models.CASCADE, related_name="search_hits")
    query = models.ForeignKey(
        "research.Query", null=True, blank=True, on_delete=models.SET_NULL, related_name="hits"
    )
    query_text = models.TextField()
    adapter = models.CharField(max_length=40)
    rank = models.PositiveIntegerField()
    raw_score = models.FloatField(null=True, blank=True)
    canonical_id = models.CharField(max_length=600, blank=True)
    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="hits"
    )
    record = models.JSONField(help_text="The adapter's normalized record.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "query_text", "adapter", "rank"]
        constraints = [
            # A retried search stage writes the same rows again: idempotent.
            models.UniqueConstraint(
                fields=["run", "query_text", "adapter", "rank"], name="searchhit_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.adapter}#{self.rank} {self.canonical_id}"


class Verdict(models.TextChoices):
    PENDING = "pending"
    PASS = "pass", "PASS"
    FAIL = "fail", "FAIL"
    UNCERTAIN = "uncertain", "UNCERTAIN"
    UNVERIFIABLE = "unverifiable", "UNVERIFIABLE"  # no valid vote from any judging family


class DispositionState(models.TextChoices):
    PENDING = "pending"
    KEPT = "kept"
    DROPPED = "dropped"
    SUPERSEDED = "superseded"


class ReviewState(models.TextChoices):
    UNREVIEWED = "unreviewed"
    APPROVED = "approved"
    NARROWED = "narrowed"
    REJECTED = "rejected"
    # One reviewer overrode the verdict; the plan's gate wants a second one to confirm.
    OVERRIDING = "overriding", "Override awaiting a second reviewer"


class ClaimType(models.TextChoices):
    HISTORICAL = "historical"
    DEFINITIONAL = "definitional"
    MECHANISTIC = "mechanistic"
    EMPIRICAL = "empirical"
    COMPARATIVE = "comparative"
    CURRENT_STATE = "current-state"
    CAUSAL = "causal"
    NUMERICAL = "numerical"
    TEMPORAL = "temporal"
    RECOMMENDATION = "recommendation"


class StudyDesign(models.TextChoices):
    """What kind of study a source reports (``research.pipeline.claims.design``)."""

    META_ANALYSIS = "meta-analysis", "meta-analysis"
    SYSTEMATIC_REVIEW = "systematic-review", "systematic review"
    RCT = "rct", "randomized controlled trial"
    COHORT = "cohort", "cohort study"
    CASE_CONTROL = "case-control", "case-control study"
    CROSS_SECTIONAL = "cross-sectional", "cross-sectional study"
    CASE_REPORT = "case-report", "case report or series"
    NARRATIVE_REVIEW = "narrative-review", "narrative review"
    GUIDELINE = "guideline", "guideline"
    ANIMAL = "animal", "animal study"
    IN_VITRO = "in-vitro", "in vitro study"


class SentenceRole(models.TextChoices):
    """What a mined sentence does in its document (``research.pipeline.claims.roles``)."""

    RESULT = "result"
    CONCLUSION = "conclusion"
    STATEMENT = "statement"
    METHOD = "method"
    DESIGN = "design"
    AIM = "aim"
    BACKGROUND = "background"
    BOILERPLATE = "boilerplate"
    QUESTION = "question"
    FRAGMENT = "fragment"


class Direction(models.TextChoices):
    """Which way a finding goes, as it states it (``research.pipeline.claims.facets``)."""

    INCREASES = "increases"
    DECREASES = "decreases"
    NO_EFFECT = "no effect"
    ASSOCIATED = "associated"
    NOT_ASSOCIATED = "not associated"


class SourceProfile(models.Model):
    """A source's study design and population as its text states them (written at mining)."""

    source = models.OneToOneField(Source, on_delete=models.CASCADE, related_name="profile")
    design = models.CharField(max_length=20, choices=StudyDesign.choices, blank=True)
    design_cue = models.CharField(max_length=120, blank=True, help_text="The words that decided.")
    humans = models.BooleanField(null=True, blank=True, help_text="None: the text does not say.")
    age_min = models.FloatField(null=True, blank=True)
    age_max = models.FloatField(null=True, blank=True)
    age_text = models.CharField(max_length=80, blank=True, help_text="The ages as stated.")
    population = models.CharField(max_length=120, blank=True)
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # Report and ledger grouping by design: WHERE design = %s.
            models.Index(fields=["design"], name="sourceprofile_design"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id}: {self.design or 'design not stated'}"


class Claim(models.Model):
    """An atomic proposition: the unit of truth, verified and reviewed as a capsule."""

    code = models.UUIDField(default=uuid4, unique=True, editable=False)
    run = models.ForeignKey("research.Run", on_delete=models.CASCADE, related_name="claims")
    subquestion = models.ForeignKey(
        "research.Subquestion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="claims",
    )
    text = models.TextField()
    fingerprint = models.CharField(max_length=64, help_text="sha256 of normalized text.")
    claim_type = models.CharField(max_length=20, choices=ClaimType.choices, blank=True)
    entities = models.JSONField(default=list, blank=True)
    numbers = models.JSONField(default=list, blank=True)
    hedges = models.JSONField(default=list, blank=True)
    time_sensitive = models.BooleanField(default=False)
    status = models.CharField(max_length=12, choices=Verdict.choices, default=Verdict.PENDING)
    shadow_status = models.CharField(
        max_length=12,
        choices=Verdict.choices,
        blank=True,
        help_text="The verdict had the shadow verifier families counted; empty without any.",
    )
    rationale = models.TextField(blank=True)
    flags = models.JSONField(default=list, blank=True)
    disposition = models.CharField(
        max_length=12, choices=DispositionState.choices, default=DispositionState.PENDING
    )
    disposition_reason = models.TextField(blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    # Capsule: what a report may say on the strength of this claim.
    allowed_scope = models.TextField(blank=True)
    prohibited_overstatements = models.JSONField(default=list, blank=True)
    limitations = models.TextField(blank=True)
    confidence = models.FloatField(null=True, blank=True)
    independent_sources = models.PositiveIntegerField(default=0)
    support_count = models.PositiveIntegerField(default=0)
    refute_count = models.PositiveIntegerField(default=0)
    review_state = models.CharField(
        max_length=12, choices=ReviewState.choices, default=ReviewState.UNREVIEWED
    )
    rejection_code = models.CharField(
        max_length=40,
        blank=True,
        help_text="The reason code of the reviewer's rejection (unsupported, contradicted, …); "
        "empty unless the claim is rejected.",
    )
    version = models.PositiveIntegerField(default=1, help_text="Optimistic lock for reviews.")
    counter_evidence = models.JSONField(
        default=dict,
        blank=True,
        help_text="The counter-evidence stage's queries and pool sizes; empty until it ran.",
    )
    # What mining found out about the finding (research.pipeline.claims).
    relevance = models.FloatField(
        null=True, blank=True, help_text="0–1: how much it bears on the question and subquestion."
    )
    relevance_parts = models.JSONField(
        default=dict, blank=True, help_text="The relevance score's parts (dense, lexical, …)."
    )
    rank = models.PositiveIntegerField(
        null=True, blank=True, help_text="1 = the run's most relevant claim."
    )
    role = models.CharField(max_length=12, choices=SentenceRole.choices, blank=True)
    study_design = models.CharField(
        max_length=20,
        choices=StudyDesign.choices,
        blank=True,
        help_text="The strongest design among its sources.",
    )
    population = models.TextField(blank=True, help_text="Who, as stated.")
    intervention = models.TextField(blank=True, help_text="The intervention or exposure.")
    outcome = models.TextField(blank=True)
    direction = models.CharField(max_length=16, choices=Direction.choices, blank=True)
    effect = models.TextField(blank=True, help_text="The effect size as stated.")
    year = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Publication year, when the source metadata has one."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "subquestion", "pk"]
        constraints = [
            # One proposition per run: a merge adds evidence links, never a second claim.
            models.UniqueConstraint(fields=["run", "fingerprint"], name="claim_unique_fingerprint")
        ]
        indexes = [
            # Ledger view: WHERE run_id = %s AND status = %s ORDER BY pk.
            models.Index(fields=["run", "status"], name="claim_run_status"),
            # Ledger sorted by relevance and the report's top findings: WHERE run_id = %s
            # ORDER BY rank.
            models.Index(fields=["run", "rank"], name="claim_run_rank"),
            # Report grouping by design: WHERE run_id = %s AND study_design = %s.
            models.Index(fields=["run", "study_design"], name="claim_run_design"),
            # Ledger full-text search: text ILIKE '%term%'.
            GinIndex(name="claim_text_trgm", fields=["text"], opclasses=["gin_trgm_ops"]),
        ]

    def __str__(self) -> str:
        return self.text[:80]

    def get_absolute_url(self) -> str:
        return reverse("review-show-claim", args=[self.code])


class Relation(models.TextChoices):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    # A contradiction that is not credible enough to FAIL the claim (its own source, no
    # explicit conflict, low confidence, another subject): shown, flagged, never FAIL.
    POSSIBLE = "possible-contradiction", "Possible contradiction"
    INSUFFICIENT = "insufficient"
    UNVERIFIABLE = "unverifiable"
    BACKGROUND = "background"


class Pool(models.TextChoices):
    SUPPORT = "support"
    REFUTE = "refute"
    BACKGROUND = "background"


class EvidenceLink(models.Model):
    """A claim bound to a passage with a verbatim quote at exact snapshot offsets."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="evidence")
    passage = models.ForeignKey(Passage, on_delete=models.PROTECT, related_name="evidence")
    snapshot = models.ForeignKey(Snapshot, on_delete=models.PROTECT, related_name="evidence")
    pool = models.CharField(max_length=12, choices=Pool.choices)
    relation = models.CharField(
        max_length=24, choices=Relation.choices, default=Relation.INSUFFICIENT
    )
    quote = models.TextField()
    quote_start = models.PositiveIntegerField(help_text="Offset in snapshot.text.")
    quote_end = models.PositiveIntegerField()
    passage_fingerprint = models.CharField(max_length=64)
    score = models.FloatField(null=True, blank=True)
    retrieval = models.JSONField(default=dict, blank=True, help_text="Per-retriever ranks.")
    is_anchor = models.BooleanField(
        default=False, help_text="The sentence the claim was mined from."
    )

    class Meta:
        ordering = ["claim", "pool", "-score"]
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "passage", "pool"], name="evidence_unique_pool"
            )
        ]

    def __str__(self) -> str:
        return f"{self.claim_id} {self.relation} {self.passage_id}"


class CitationOutcome(models.TextChoices):
    """How the source a report cites for a claim judges it (``research.pipeline.audit``)."""

    PENDING = "pending"
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    INSUFFICIENT = "insufficient"
    UNVERIFIABLE = "unverifiable"
    UNCITED = "uncited"


class CitedClaim(models.Model):
    """A claim of an audited report, bound to the sentence(s) it came from and what they cite.

    The citation check judges the claim against the cited sources' passages only (seed
    002's expected pair); the claim's own verdict (``Claim.status``) is the run's ordinary
    one, over the cited source and the counter-evidence found in the libraries.
    """

    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="cited")
    sentences = models.JSONField(default=list, help_text="Indices of the report's sentences.")
    wording = models.TextField(blank=True, help_text="The report's sentence(s), as written.")
    citations = models.JSONField(
        default=list, help_text="The citations as the report wrote them (label, url, doi, …)."
    )
    unresolved = models.JSONField(
        default=list, help_text="Markers of the sentence that name no reference."
    )
    sources = models.ManyToManyField(Source, blank=True, related_name="cited_by")
    unreadable = models.JSONField(
        default=list, help_text="Each cited source that could not be read, and why."
    )
    outcome = models.CharField(
        max_length=12, choices=CitationOutcome.choices, default=CitationOutcome.PENDING
    )
    reason = models.TextField(blank=True)
    passage = models.ForeignKey(
        Passage, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    quote = models.TextField(
        blank=True,
        help_text="The cited source's words that decided; when it does not settle the claim, "
        "its words closest to the claim.",
    )
    confidence = models.FloatField(null=True, blank=True)
    remediation = models.JSONField(
        default=dict,
        blank=True,
        help_text="The search for better support of a claim its citation does not support: "
        "where it searched, what it found, in words.",
    )

    class Meta:
        ordering = ["claim"]

    def __str__(self) -> str:
        return f"{self.claim_id} citation {self.outcome}"

    @property
    def mark(self) -> str:
        """The audited report's mark for the claim (``research.pipeline.audit.check``)."""
        from research.pipeline.audit.check import disposition

        claim = self.claim
        rejected = claim.review_state == ReviewState.REJECTED
        return disposition(
            self.outcome, claim.status, rejected=rejected, rejected_as=claim.rejection_code
        )

    @property
    def mark_words(self) -> str:
        from research.pipeline.audit.check import MARK_WORDS

        return MARK_WORDS.get(self.mark, "")


class VerifierVote(models.Model):
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="votes")
    evidence = models.ForeignKey(
        EvidenceLink, null=True, blank=True, on_delete=models.CASCADE, related_name="votes"
    )
    verifier = models.CharField(max_length=60)
    family = models.CharField(max_length=20, help_text="rules, nli, llm, learned.")
    verdict = models.CharField(max_length=24, choices=Relation.choices)
    score = models.FloatField(null=True, blank=True)
    quote = models.TextField(blank=True)
    rationale = models.TextField(blank=True)
    valid = models.BooleanField(default=True)
    discard_reason = models.CharField(max_length=200, blank=True)
    shadow = models.BooleanField(
        default=False, help_text="Cast by a family in shadow mode: shown, never counted."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["claim", "verifier"]
        constraints = [
            # Duplicate votes are discarded: one vote per verifier per pair.
            models.UniqueConstraint(
                fields=["claim", "evidence", "verifier"],
                name="vote_unique_pair",
                nulls_distinct=False,
            )
        ]

    def __str__(self) -> str:
        return f"{self.verifier}: {self.verdict}"


class CandidateState(models.TextChoices):
    KEPT = "kept"
    MERGED = "merged"
    DROPPED = "dropped"


class Candidate(models.Model):
    """Every proposition claim mining considered, and what became of it.

    A candidate is *kept* when it became a claim, *merged* when it was the same
    proposition as a claim (another wording, or found again under another
    subquestion), and *dropped* with the reason when it never reached verification
    (a question, a statement of aim or method, too short, over the claim budget, an
    anchor that no longer matches its snapshot). Claims are what verifiers vote on;
    candidates are the miner's account of everything it set aside.
    """

    run = models.ForeignKey("research.Run", on_delete=models.CASCADE, related_name="candidates")
    subquestion = models.ForeignKey(
        "research.Subquestion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="candidates",
    )
    text = models.TextField()
    fingerprint = models.CharField(max_length=64, help_text="sha256 of normalized text.")
    claim_type = models.CharField(max_length=20, choices=ClaimType.choices, blank=True)
    state = models.CharField(max_length=10, choices=CandidateState.choices)
    reason = models.TextField()
    claim = models.ForeignKey(
        Claim,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,  # the miner's record outlives the claim
        related_name="candidates",
        help_text="The claim it became or was merged into.",
    )
    # The source sentence, bound to the snapshot like an evidence quote (empty if unbound).
    passage = models.ForeignKey(
        Passage, null=True, blank=True, on_delete=models.PROTECT, related_name="candidates"
    )
    snapshot = models.ForeignKey(
        Snapshot, null=True, blank=True, on_delete=models.PROTECT, related_name="candidates"
    )
    quote = models.TextField(blank=True)
    quote_start = models.PositiveIntegerField(null=True, blank=True)
    quote_end = models.PositiveIntegerField(null=True, blank=True)
    origin = models.CharField(max_length=80, blank=True, help_text="rules or llm:<model>.")
    relevance = models.FloatField(
        null=True, blank=True, help_text="0–1 against the question and subquestion."
    )
    role = models.CharField(max_length=12, choices=SentenceRole.choices, blank=True)
    study_design = models.CharField(max_length=20, choices=StudyDesign.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "subquestion", "pk"]
        constraints = [
            # Mining a subquestion twice (a retried step) records each candidate once.
            models.UniqueConstraint(
                fields=["run", "subquestion", "fingerprint"],
                name="candidate_unique_per_subquestion",
                nulls_distinct=False,
            )
        ]
        indexes = [
            # Ledger "set aside at mining" list: WHERE run_id = %s AND state = %s ORDER BY pk.
            models.Index(fields=["run", "state"], name="candidate_run_state"),
        ]

    def __str__(self) -> str:
        return f"{self.state}: {self.text[:70]}"


class ContestedPair(models.Model):
    """Two claims of a run that report conflicting findings on the same thing.

    Both stay claims (each verified on its own); the reviewer sees them side by side.
    ``claim`` is the one with the lower primary key.
    """

    run = models.ForeignKey("research.Run", on_delete=models.CASCADE, related_name="contested")
    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="contested_as_first")
    other = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="contested_as_second")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "claim", "other"]
        constraints = [
            models.UniqueConstraint(fields=["claim", "other"], name="contested_unique_pair"),
            models.CheckConstraint(
                condition=models.Q(claim__lt=models.F("other")), name="contested_ordered_pair"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.claim_id} vs {self.other_id}"


class EvidenceGap(models.Model):
    """A subquestion for which mining found no relevant finding, and what was searched."""

    run = models.ForeignKey("research.Run", on_delete=models.CASCADE, related_name="gaps")
    subquestion = models.ForeignKey(
        "research.Subquestion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="gaps",
    )
    queries = models.JSONField(default=list, blank=True, help_text="The queries searched.")
    passages = models.PositiveIntegerField(default=0, help_text="Passages read.")
    candidates = models.PositiveIntegerField(default=0, help_text="Sentences considered.")
    best_relevance = models.FloatField(null=True, blank=True)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "subquestion"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "subquestion"], name="gap_unique_subquestion", nulls_distinct=False
            )
        ]

    def __str__(self) -> str:
        return f"gap: {self.reason[:60]}"


class Disposition(models.Model):
    """Append-only history of what happened to a claim and why (nothing vanishes)."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="dispositions")
    state = models.CharField(max_length=12, choices=DispositionState.choices)
    reason = models.TextField()
    stage = models.CharField(max_length=20, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["claim", "created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.state}: {self.reason[:60]}"


# --- BM25 index inside Postgres (written only by ledger.services.sparse_index) ----------
# One index per passage kind: statistics, document frequencies and postings are keyed by
# kind, so chunk and section passages are scored each against their own collection. The
# triggers in migration ``0004_sparse_bm25_index`` keep ``SparseTerm.df`` and
# ``SparseStats`` exact on every insert and delete of postings and documents, however the
# rows go (a passage deleted through the ORM cascades here; bulk SQL deletes too).


class SparseStats(models.Model):
    """Collection statistics of one kind's BM25 index: N and total length (for avgdl)."""

    kind = models.CharField(max_length=10, primary_key=True)
    documents = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "sparse stats"

    def __str__(self) -> str:
        return f"{self.kind}: {self.documents} passages"


class SparseTerm(models.Model):
    """Document frequency of one analyzed term in one kind's BM25 index."""

    pk = models.CompositePrimaryKey("kind", "term")
    kind = models.CharField(max_length=10)
    term = models.CharField(max_length=64)
    df = models.IntegerField(default=0)
    # Its SparseBlock holds the postings through this passage id (0: nothing packed); the
    # postings above it are read from SparsePosting, in primary-key order.
    packed_through = models.BigIntegerField(default=0, db_default=0)
    # Postings not in the block as packed: above packed_through, in SparseDelta, or in
    # SparseGone (kept by the triggers); the packer folds a term when this is large vs df.
    pending = models.IntegerField(default=0, db_default=0)

    def __str__(self) -> str:
        return f"{self.kind}:{self.term} df={self.df}"


class SparseDocument(models.Model):
    """A passage as the BM25 index holds it: its analyzed length and indexed fingerprint."""

    passage = models.OneToOneField(
        Passage, primary_key=True, on_delete=models.CASCADE, related_name="sparse"
    )
    kind = models.CharField(max_length=10)
    length = models.PositiveIntegerField()
    fingerprint = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"{self.kind}:{self.passage_id} len={self.length}"


class SparsePosting(models.Model):
    """Term frequency of a term in a passage, with the passage length (no join to score)."""

    # BM25 query: WHERE kind = %s AND term = ANY(%s) — the primary key's leading columns.
    pk = models.CompositePrimaryKey("kind", "term", "document")
    kind = models.CharField(max_length=10)
    term = models.CharField(max_length=64)
    document = models.ForeignKey(
        SparseDocument, on_delete=models.CASCADE, db_column="passage_id", related_name="postings"
    )
    tf = models.PositiveIntegerField()
    dl = models.PositiveIntegerField()
    # The passage's source, copied so library / type / date filters need no join.
    source_id = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.kind}:{self.term}@{self.document_id} tf={self.tf}"


# --- the packed form the query reads (ledger.services.sparse_index) ----------------------
# SparsePosting is the truth, one row per posting. A query reads each query term's postings
# packed in one value instead: ``SparseBlock`` (every posting when the term was last
# folded, through passage id ``SparseTerm.packed_through``), minus ``SparseGone`` (packed
# postings deleted since), plus the posting rows above ``packed_through`` and
# ``SparseDelta`` (postings added since at or below it: passages indexed again or late).
# The posting triggers keep this exact in the writing transaction, whatever writes or
# deletes postings: live postings of a term = (block - gone) + above + delta.


class SparseBlock(models.Model):
    """Every posting of one term when it was last packed: passage ids, tf and dl arrays."""

    # BM25 query: WHERE kind = %s AND term = ANY(%s) — the primary key.
    pk = models.CompositePrimaryKey("kind", "term")
    kind = models.CharField(max_length=10)
    term = models.CharField(max_length=64)
    postings = models.IntegerField()
    data = models.BinaryField()  # format: ledger.services.sparse_index.pack_postings

    def __str__(self) -> str:
        return f"{self.kind}:{self.term} ({self.postings} packed)"


class SparseDelta(models.Model):
    """A posting added at or below its term's ``packed_through`` since it was packed."""

    # BM25 query and packer: WHERE kind = %s AND term = ANY(%s) — the primary key.
    pk = models.CompositePrimaryKey("kind", "term", "passage_id")
    kind = models.CharField(max_length=10)
    term = models.CharField(max_length=64)
    passage_id = models.BigIntegerField()
    tf = models.IntegerField()
    dl = models.IntegerField()

    def __str__(self) -> str:
        return f"+{self.kind}:{self.term}@{self.passage_id}"


class SparseGone(models.Model):
    """A packed posting deleted since its term was last packed (the delete trigger)."""

    # BM25 query and packer: WHERE kind = %s AND term = ANY(%s) — the primary key.
    pk = models.CompositePrimaryKey("kind", "term", "passage_id")
    kind = models.CharField(max_length=10)
    term = models.CharField(max_length=64)
    passage_id = models.BigIntegerField()

    def __str__(self) -> str:
        return f"-{self.kind}:{self.term}@{self.passage_id}"
