"""Ingestion tasks: thin wrappers over ledger services, safe to retry (keyed by content hash)."""

from __future__ import annotations

import logging

from procrastinate.contrib.django import app

from config.procrastinate import TASK_RETRY
from ledger.services.ingest import summarize
from ledger.services.uploads import INGEST_QUEUE, INGEST_TASK, do_ingest_uploads

logger = logging.getLogger(__name__)


@app.task(
    name=INGEST_TASK,
    queue=INGEST_QUEUE,
    retry=TASK_RETRY,
)
def ingest_uploads(batch: str) -> None:
    """Ingest one upload batch; a retry resumes with the uploads still unfinished."""
    results = do_ingest_uploads(batch)
    logger.info("upload batch %s: %s", batch, summarize(results))
