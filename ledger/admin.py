from __future__ import annotations

from django.contrib import admin

from ledger.models import (
    Candidate,
    CitedClaim,
    Claim,
    ContestedPair,
    Disposition,
    EvidenceGap,
    EvidenceLink,
    Library,
    LibraryMember,
    Passage,
    SearchHit,
    Snapshot,
    Source,
    SourceProfile,
    SparseDocument,
    SparseStats,
    Upload,
    VerifierVote,
)
from research.admin import ReadOnlyAdmin


class LibraryMemberInline(admin.TabularInline):  # type: ignore[type-arg]
    model = LibraryMember
    raw_id_fields = ["user"]
    extra = 0


@admin.register(Library)
class LibraryAdmin(admin.ModelAdmin[Library]):
    list_display = ["name", "owner", "public", "capture_for", "created_at"]
    list_filter = ["public"]
    raw_id_fields = ["owner", "capture_for"]
    inlines = [LibraryMemberInline]


@admin.register(LibraryMember)
class LibraryMemberAdmin(admin.ModelAdmin[LibraryMember]):
    list_display = ["library", "user", "team", "access", "added_at"]
    raw_id_fields = ["library", "user"]


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin[Source]):
    list_display = ["title", "source_type", "publisher", "cluster", "created_at"]
    list_filter = ["source_type"]
    search_fields = ["title", "canonical_id", "doi"]
    exclude = ["minhash"]


@admin.register(Snapshot)
class SnapshotAdmin(ReadOnlyAdmin):
    list_display = ["source", "text_sha256", "fetched_at", "extractor"]
    exclude = ["raw"]


@admin.register(Passage)
class PassageAdmin(ReadOnlyAdmin):
    list_display = ["snapshot", "kind", "start", "end", "section_path"]
    exclude = ["embedding"]


@admin.register(SearchHit)
class SearchHitAdmin(ReadOnlyAdmin):
    list_display = ["run", "adapter", "rank", "canonical_id"]


@admin.register(Claim)
class ClaimAdmin(ReadOnlyAdmin):
    list_display = ["text", "status", "review_state", "disposition", "run"]
    list_filter = ["status", "review_state", "disposition"]
    search_fields = ["text"]


@admin.register(CitedClaim)
class CitedClaimAdmin(ReadOnlyAdmin):
    list_display = ["claim", "outcome", "confidence"]
    list_filter = ["outcome"]


@admin.register(Candidate)
class CandidateAdmin(ReadOnlyAdmin):
    list_display = ["text", "state", "reason", "run"]
    list_filter = ["state"]
    search_fields = ["text", "reason"]


@admin.register(EvidenceLink)
class EvidenceLinkAdmin(ReadOnlyAdmin):
    list_display = ["claim", "pool", "relation", "quote_start", "quote_end"]


@admin.register(VerifierVote)
class VerifierVoteAdmin(ReadOnlyAdmin):
    list_display = ["claim", "verifier", "family", "verdict", "valid"]


@admin.register(Disposition)
class DispositionAdmin(ReadOnlyAdmin):
    list_display = ["claim", "state", "reason", "created_at"]


@admin.register(Upload)
class UploadAdmin(ReadOnlyAdmin):
    list_display = ["filename", "library", "status", "size", "created_at"]
    list_filter = ["status"]
    exclude = ["raw"]


@admin.register(SparseStats)
class SparseStatsAdmin(ReadOnlyAdmin):
    """The BM25 index is derived data, kept by triggers: visible, never edited by hand."""

    list_display = ["kind", "documents", "total_length"]


@admin.register(SparseDocument)
class SparseDocumentAdmin(ReadOnlyAdmin):
    list_display = ["passage", "kind", "length"]
    raw_id_fields = ["passage"]


@admin.register(SourceProfile)
class SourceProfileAdmin(ReadOnlyAdmin):
    list_display = ["source", "design", "design_cue", "age_text", "population", "year"]
    list_filter = ["design"]


@admin.register(ContestedPair)
class ContestedPairAdmin(ReadOnlyAdmin):
    list_display = ["run", "claim", "other", "reason"]


@admin.register(EvidenceGap)
class EvidenceGapAdmin(ReadOnlyAdmin):
    list_display = ["run", "subquestion", "passages", "candidates", "best_relevance", "reason"]
