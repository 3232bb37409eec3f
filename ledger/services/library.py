"""Libraries: named collections of sources (imported corpora, uploads)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from ledger.models import Library, Passage, Source
from ledger.services.ingest import DocumentInput, IngestProgress, IngestResult, ingest_documents
from research.roles import can_edit_plans


def get_or_create_library(name: str, owner: User | None = None) -> Library:
    library, _ = Library.objects.get_or_create(name=name, defaults={"owner": owner})
    return library


def web_capture_library_name(plan_code: object) -> str:
    """Web pages a plan's runs fetch go into the plan's own capture library."""
    return f"web captures of plan {plan_code}"


def get_web_capture_library(plan_code: object) -> Library | None:
    return Library.objects.filter(name=web_capture_library_name(plan_code)).first()


def do_get_web_capture_library(plan_code: object) -> Library:
    """The plan's capture library, created on first use."""
    return get_or_create_library(web_capture_library_name(plan_code))


def do_import_corpus(
    docs: Sequence[DocumentInput],
    library_name: str,
    *,
    progress: IngestProgress | None = None,
    batch_size: int = 256,
    **options: Any,
) -> list[IngestResult]:
    """Ingest corpus documents into the named library (created when missing)."""
    library = get_or_create_library(library_name)
    return ingest_documents(
        docs, library, progress=progress, batch_size=batch_size, total=len(docs), **options
    )


def can_upload(user: Any) -> bool:
    """Researchers and staff add documents; other signed-in users only read."""
    return can_edit_plans(user)


def filter_sources(filters: dict[str, Any]) -> QuerySet[Source]:
    """The library table: sources with snapshot counts and near-duplicate cluster sizes."""
    sources = Source.objects.all()
    if filters.get("library"):
        sources = sources.filter(libraries=filters["library"])
    if filters.get("source_type"):
        sources = sources.filter(source_type=filters["source_type"])
    if filters.get("cluster"):
        sources = sources.filter(cluster=filters["cluster"])
    if filters.get("q"):
        term = filters["q"].strip()
        sources = sources.filter(Q(title__icontains=term) | Q(canonical_id__icontains=term))
    cluster_size = (
        Source.objects.filter(cluster=OuterRef("cluster"))
        .exclude(cluster="")
        .values("cluster")
        .annotate(n=Count("pk"))
        .values("n")
    )
    sources = sources.annotate(
        snapshot_count=Count("snapshots", distinct=True),
        cluster_size=Coalesce(Subquery(cluster_size), 1),
    )
    if filters.get("duplicates"):
        sources = sources.filter(cluster_size__gt=1)
    return sources.order_by("-created_at", "-pk")


def passage_marks(text: str, passages: Sequence[Passage]) -> list[dict[str, Any]]:
    """Split ``text`` at every chunk boundary; each piece lists the boundaries before it.

    Chunks overlap, so boundaries are markers between pieces, never nested elements:
    the template renders each piece's text autoescaped after its markers.
    """
    marks: dict[int, list[tuple[str, int]]] = {}
    for number, passage in enumerate(passages, start=1):
        marks.setdefault(passage.start, []).append(("start", number))
        marks.setdefault(passage.end, []).append(("end", number))
    cuts = sorted({0, len(text), *marks})
    pieces = []
    for start, end in zip(cuts, cuts[1:] + [len(text)], strict=True):
        here = sorted(marks.get(start, []), key=lambda m: (m[0] == "start", m[1]))
        pieces.append({"marks": here, "text": text[start:end]})
    return pieces
