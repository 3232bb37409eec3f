"""Ingestion tasks: thin wrappers over ledger services, safe to retry (keyed by content hash)."""

from __future__ import annotations

import logging

from django.conf import settings
from procrastinate.contrib.django import app

from config.procrastinate import TASK_RETRY
from ledger.services.ingest import summarize
from ledger.services.uploads import (
    INGEST_QUEUE,
    INGEST_TASK,
    defer_ingest,
    do_ingest_uploads,
    pending_uploads,
)

logger = logging.getLogger(__name__)


@app.task(
    name=INGEST_TASK,
    queue=INGEST_QUEUE,
    retry=TASK_RETRY,
)
def ingest_uploads(batch: str) -> None:
    """Ingest one upload batch for at most about ``INGEST_MAX_SECONDS`` (plus the file under
    way), then queue the rest as a new job behind whatever was queued meanwhile; a retry
    resumes with the uploads still unfinished."""
    results = do_ingest_uploads(batch, slice_s=settings.INGEST_MAX_SECONDS)
    logger.info("upload batch %s: %s", batch, summarize(results))
    if pending_uploads(batch).exists():
        logger.info("upload batch %s: the rest goes back to the end of the queue", batch)
        defer_ingest(batch)
