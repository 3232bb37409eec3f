"""Uploaded files: queue them (one row each, with their bytes), then ingest them in a task."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from uuid import UUID, uuid4

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone
from procrastinate.contrib.django import app

from ledger.models import Library, Upload, UploadStatus
from ledger.services.ingest import (
    DocumentInput,
    IngestProgress,
    IngestResult,
    ingest_documents,
)

UPLOAD_BATCH = 8  # files per ingest batch: per-file results appear while the rest continue
# The task that ingests a batch (registered in ledger/tasks.py) and its queue.
INGEST_TASK = "ledger.ingest_uploads"
INGEST_QUEUE = "ingest"

_STATUS = {
    "added": UploadStatus.ADDED,
    "new_snapshot": UploadStatus.ADDED,
    "unchanged": UploadStatus.DUPLICATE,
    "duplicate": UploadStatus.DUPLICATE,
    "failed": UploadStatus.FAILED,
}


def do_queue_uploads(library: Library, user: User | None, files: Sequence[UploadedFile]) -> UUID:
    """Store each file as a queued Upload and enqueue one ingest job for the batch."""
    batch = uuid4()
    with transaction.atomic():
        for file in files:
            data = file.read()
            Upload.objects.create(
                library=library,
                uploaded_by=user,
                batch=batch,
                filename=(file.name or "upload")[:255],
                content_type=(file.content_type or "")[:120],
                size=len(data),
                raw=zlib.compress(data),
                raw_sha256=hashlib.sha256(data).hexdigest(),
            )
        transaction.on_commit(
            lambda: app.configure_task(INGEST_TASK, queue=INGEST_QUEUE).defer(batch=str(batch))
        )
    return batch


def recent_batches(user: User, limit: int = 5) -> list[dict[str, object]]:
    """The user's latest upload batches with their progress (the library page lists them,
    so a batch's status survives a reload)."""
    rows = (
        Upload.objects.filter(uploaded_by=user)
        .values("batch", "library__name")
        .annotate(
            files=Count("pk"),
            pending=Count("pk", filter=Q(status__in=[UploadStatus.QUEUED, UploadStatus.RUNNING])),
            failed=Count("pk", filter=Q(status=UploadStatus.FAILED)),
            started=Min("created_at"),
        )
        .order_by("-started")[:limit]
    )
    return list(rows)


def pending_uploads(batch: UUID | str) -> QuerySet[Upload]:
    """Uploads of a batch not finished yet (queued, or running when a worker died)."""
    return Upload.objects.filter(
        batch=batch, status__in=[UploadStatus.QUEUED, UploadStatus.RUNNING]
    ).order_by("pk")


def do_ingest_uploads(batch: UUID | str) -> list[IngestResult]:
    """Ingest the unfinished uploads of a batch; safe to run again after a crash."""
    uploads = list(pending_uploads(batch).select_related("library"))
    if not uploads:
        return []
    Upload.objects.filter(pk__in=[u.pk for u in uploads]).update(status=UploadStatus.RUNNING)
    docs = [
        DocumentInput(
            raw=zlib.decompress(bytes(upload.raw)),
            label=upload.filename,
            filename=upload.filename,
            content_type=upload.content_type,
            metadata={"filename": upload.filename},
        )
        for upload in uploads
    ]
    progress = _RecordEachBatch(uploads)
    return ingest_documents(
        docs, uploads[0].library, progress=progress, batch_size=UPLOAD_BATCH, total=len(docs)
    )


class _RecordEachBatch(IngestProgress):
    """Writes each file's result as soon as its ingest batch commits (the page polls)."""

    def __init__(self, uploads: list[Upload]) -> None:
        self.uploads = uploads

    def batch_done(self, done: int, total: int, results: Sequence[IngestResult]) -> None:
        _record_results(self.uploads[done - len(results) : done], list(results))


def _record_results(uploads: list[Upload], results: list[IngestResult]) -> None:
    now = timezone.now()
    with transaction.atomic():
        for upload, result in zip(uploads, results, strict=True):
            upload.status = _STATUS[result.status]
            upload.error_reason, upload.error = result.error_reason, result.error
            upload.source_id = result.source_id
            upload.passages = result.passages
            upload.finished_at = now
            if result.status != "failed":
                upload.raw = b""  # the snapshot keeps the bytes now
            upload.save(
                update_fields=[
                    "status",
                    "error_reason",
                    "error",
                    "source",
                    "passages",
                    "finished_at",
                    "raw",
                ]
            )
