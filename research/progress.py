"""Publishing run progress to the run's channel group, after the transaction commits."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

__all__ = ["publish_run_progress", "run_group"]

logger = logging.getLogger(__name__)


def run_group(code: object) -> str:
    """The channel group of one run's progress (``research.consumers`` joins it)."""
    return f"run-{code}"


def publish_run_progress(run_code: object) -> None:
    """Announce that a run changed; only its id travels, consumers re-read the row."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            logger.warning("no channel layer configured: live progress is off")
            return
        try:
            async_to_sync(layer.group_send)(
                run_group(run_code), {"type": "research.run_progress", "run": str(run_code)}
            )
        except Exception:  # the page still renders from the database
            logger.exception("could not publish progress for run %s", run_code)

    transaction.on_commit(send)
