"""Uploaded files: queue them (one row each, with their bytes), then ingest them in a task.

A ``.jsonl`` file is a corpus (BEIR or SciFact format): its records are ingested in
batches, each bad line is skipped and reported with its number, and the upload row
records how many documents are done after every batch (the page's progress and ETA).
Its documents are ``corpus:upload-<library code>:<doc id>``: another user's corpus with
the same ids can never receive a snapshot from this upload.
"""

from __future__ import annotations

import hashlib
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from time import monotonic
from uuid import UUID, uuid4

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone
from procrastinate.contrib.django import app

from ledger.models import Library, Upload, UploadKind, UploadStatus
from ledger.services.corpus import BadLine, CorpusError, detect_format, read_corpus
from ledger.services.ingest import (
    ISOLATE_FROM_BYTES,
    DocumentInput,
    IngestProgress,
    IngestResult,
    ingest_documents,
    summarize,
)

UPLOAD_BATCH = 8  # files per ingest batch: per-file results appear while the rest continue
# The task that ingests a batch (registered in ledger/tasks.py) and its queue.
INGEST_TASK = "ledger.ingest_uploads"
INGEST_QUEUE = "ingest"
CORPUS_BATCH = 64  # corpus records per ingest batch: progress is saved after each
CORPUS_SUFFIXES = (".jsonl",)
MAX_REPORTED = 200  # bad lines / failed documents listed on the page

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
                kind=UploadKind.CORPUS if is_corpus(file.name or "") else UploadKind.FILE,
                library=library,
                uploaded_by=user,
                batch=batch,
                filename=(file.name or "upload")[:255],
                content_type=(file.content_type or "")[:120],
                size=len(data),
                raw=zlib.compress(data),
                raw_sha256=hashlib.sha256(data).hexdigest(),
            )
        transaction.on_commit(lambda: defer_ingest(batch))
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


def is_corpus(filename: str) -> bool:
    return filename.lower().endswith(CORPUS_SUFFIXES)


def do_ingest_uploads(batch: UUID | str, *, slice_s: float | None = None) -> list[IngestResult]:
    """Ingest the unfinished uploads of a batch; safe to run again after a crash.

    ``slice_s`` (the task passes ``INGEST_MAX_SECONDS``) bounds how long one call holds the
    worker: small files go first, together (each is bounded by the in-process work a file
    under ``ISOLATE_FROM_BYTES`` can cost); large files one at a time, and none is started
    once ``slice_s`` has gone by. What is left stays queued for the next call, which the
    task defers to the end of the queue — so a batch of 50 hostile files delays another
    user's run by one file's bound, not by 50.
    """
    started = monotonic()
    pending = list(pending_uploads(batch).select_related("library"))
    results: list[IngestResult] = []
    for corpus in (u for u in pending if u.kind == UploadKind.CORPUS):
        results += do_ingest_corpus_upload(corpus)
    uploads = [u for u in pending if u.kind != UploadKind.CORPUS]
    small = [u for u in uploads if u.size < ISOLATE_FROM_BYTES]
    groups = [small] if small else []
    groups += [[u] for u in uploads if u.size >= ISOLATE_FROM_BYTES]
    for number, group in enumerate(groups):
        if number and slice_s is not None and monotonic() - started >= slice_s:
            break
        results += _ingest_files(group)
    return results


def do_ingest_files_now(library: Library, files: Sequence[UploadedFile]) -> list[IngestResult]:
    """Ingest files into ``library`` in this process, as the upload task ingests a batch,
    without Upload rows or the queue (a command's upload: ``bench_runs --library-bench``).
    Keyed by content like every ingest: files ingested before come back *unchanged*."""
    docs = [
        upload_input(file.name or "upload", file.content_type or "", file.read()) for file in files
    ]
    return ingest_documents(docs, library, batch_size=UPLOAD_BATCH, total=len(docs))


def upload_input(filename: str, content_type: str, raw: bytes) -> DocumentInput:
    """What ingestion is given for one uploaded file."""
    return DocumentInput(
        raw=raw,
        label=filename,
        filename=filename,
        content_type=content_type,
        metadata={"filename": filename},
    )


def _ingest_files(uploads: list[Upload]) -> list[IngestResult]:
    Upload.objects.filter(pk__in=[u.pk for u in uploads]).update(status=UploadStatus.RUNNING)
    docs = [
        upload_input(upload.filename, upload.content_type, zlib.decompress(bytes(upload.raw)))
        for upload in uploads
    ]
    progress = _RecordEachBatch(uploads)
    return ingest_documents(
        docs, uploads[0].library, progress=progress, batch_size=UPLOAD_BATCH, total=len(docs)
    )


def defer_ingest(batch: UUID | str) -> None:
    """Queue the ingest job of ``batch`` (at the end of the queue)."""
    app.configure_task(INGEST_TASK, queue=INGEST_QUEUE).defer(batch=str(batch))


def do_ingest_corpus_upload(upload: Upload) -> list[IngestResult]:
    """Ingest a JSONL corpus upload batch by batch, recording progress after each batch."""
    data = zlib.decompress(bytes(upload.raw))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.jsonl"
        path.write_bytes(data)
        try:
            detect_format(path)
        except CorpusError as exc:
            _finish_corpus(upload, [], [], error=str(exc).replace(str(path), upload.filename))
            return []
        total = sum(1 for line in data.splitlines() if line.strip())
        upload.status, upload.started_at = UploadStatus.RUNNING, timezone.now()
        upload.documents_total, upload.documents_done = total, 0
        upload.save(update_fields=["status", "started_at", "documents_total", "documents_done"])
        bad: list[BadLine] = []
        docs = read_corpus(path, f"upload-{upload.library.code}", None, bad)
        results = ingest_documents(
            docs,
            upload.library,
            progress=_CorpusProgress(upload, bad),
            batch_size=CORPUS_BATCH,
            total=total,
        )
    _finish_corpus(upload, results, bad)
    return results


class _CorpusProgress(IngestProgress):
    def __init__(self, upload: Upload, bad: list[BadLine]) -> None:
        self.upload, self.bad = upload, bad

    def batch_done(self, done: int, total: int, results: Sequence[IngestResult]) -> None:
        self.upload.documents_done = min(done + len(self.bad), self.upload.documents_total)
        self.upload.passages += sum(r.passages for r in results)
        self.upload.save(update_fields=["documents_done", "passages"])


def _finish_corpus(
    upload: Upload, results: list[IngestResult], bad: list[BadLine], error: str = ""
) -> None:
    counts = summarize(results)
    stored = sum(counts.get(k, 0) for k in ("added", "new_snapshot", "unchanged", "duplicate"))
    failed = [r for r in results if r.status == "failed"]
    upload.report = {
        "counts": counts,
        "bad_lines": [[b.line, b.reason] for b in bad[:MAX_REPORTED]],
        "bad_line_count": len(bad),
        "failed": [[r.label, r.error] for r in failed[:MAX_REPORTED]],
    }
    upload.passages = counts.get("passages", 0)
    upload.documents_done = upload.documents_total
    upload.finished_at = timezone.now()
    if error or not stored:
        upload.status = UploadStatus.FAILED
        upload.error_reason = "corpus"
        upload.error = error or (
            f"no document could be stored ({len(failed)} failed, {len(bad)} bad lines)"
        )
    else:
        upload.status = UploadStatus.ADDED
        upload.raw = b""
        problems = [f"{len(failed)} documents failed"] if failed else []
        problems += [f"{len(bad)} bad lines skipped"] if bad else []
        upload.error = "; ".join(problems)
    upload.save()


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
