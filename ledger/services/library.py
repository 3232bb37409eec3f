"""Libraries: named collections of sources (imported corpora, uploads)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User

from ledger.models import Library
from ledger.services.ingest import DocumentInput, IngestProgress, IngestResult, ingest_documents


def get_or_create_library(name: str, owner: User | None = None) -> Library:
    library, _ = Library.objects.get_or_create(name=name, defaults={"owner": owner})
    return library


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
