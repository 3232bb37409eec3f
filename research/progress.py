"""Publishing to the live-progress sockets, after the transaction commits.

Two kinds of groups: one per run (``run_group``: each progress event) and one per login
session (``session_group``: the logout that closes that session's sockets).
"""

from __future__ import annotations

import hashlib
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.dispatch import receiver

__all__ = ["publish_run_progress", "publish_session_closed", "run_group", "session_group"]

logger = logging.getLogger(__name__)


def run_group(code: object) -> str:
    """The channel group of one run's progress (``research.consumers`` joins it)."""
    return f"run-{code}"


def session_group(session_key: str) -> str:
    """The channel group of one login session's sockets, named by a hash of its key
    (the key itself is a credential and never travels over the layer)."""
    return "session-" + hashlib.sha256(session_key.encode()).hexdigest()[:32]


def publish_run_progress(run_code: object) -> None:
    """Announce that a run changed; only its id travels, consumers re-read the row."""
    event = {"type": "research.run_progress", "run": str(run_code)}
    transaction.on_commit(lambda: _send(run_group(run_code), event))


def publish_session_closed(session_key: str) -> None:
    """Tell the sockets of a session that it ended (logout): they close themselves."""
    event = {"type": "research.session_closed"}
    transaction.on_commit(lambda: _send(session_group(session_key), event))


@receiver(user_logged_out, dispatch_uid="research.progress.close_sockets_on_logout")
def close_sockets_on_logout(sender: object, request: object, **kwargs: object) -> None:
    """Logout (sent before the session is flushed) closes that session's sockets."""
    session = getattr(request, "session", None)
    if session is not None and session.session_key:
        publish_session_closed(session.session_key)


def _send(group: str, event: dict[str, str]) -> None:
    layer = get_channel_layer()
    if layer is None:
        logger.warning("no channel layer configured: live progress is off")
        return
    try:
        async_to_sync(layer.group_send)(group, event)
    except Exception:  # the page still renders from the database
        logger.exception("could not publish %s to %s", event["type"], group)
