"""Login lock-outs: django-axes' limit per (username, address), plus one per address.

axes counts the wrong passwords for one username from one address
(``LOGIN_FAILURE_LIMIT``), which someone who tries many usernames from one address never
reaches. :class:`AddressLimitHandler` also locks an address out once the wrong passwords
from it, for any usernames, reach ``LOGIN_ADDRESS_FAILURE_LIMIT`` within the cool-off
(``LOGIN_COOLOFF_MINUTES``, counted as axes counts it: from each pair's latest failure).
That limit is the higher one because colleagues behind one NAT share an address. The count
comes from axes' own attempt rows, so ``manage.py axes_reset`` clears both.
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from axes.signals import user_locked_out
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest


class AddressLimitHandler(AxesDatabaseHandler):  # type: ignore[misc]
    """axes' database handler that also refuses an address past its own limit."""

    def is_locked(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
        return bool(super().is_locked(request, credentials)) or address_locked(request)

    def user_login_failed(
        self,
        sender: object,
        credentials: dict[str, Any],
        request: HttpRequest | None = None,
        **kwargs: object,
    ) -> None:
        """Record the failure as axes does; the one that reaches the address limit locks too."""
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is None or getattr(request, "axes_locked_out", False):
            return
        if self.is_whitelisted(request, credentials) or not address_locked(request):
            return
        request.axes_locked_out = True  # type: ignore[attr-defined]
        request.axes_credentials = credentials  # type: ignore[attr-defined]
        user_locked_out.send(
            "axes",
            request=request,
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
        )


def address_failures(request: HttpRequest) -> int:
    """Wrong passwords from the request's address, for any username, within the cool-off."""
    attempts = AccessAttempt.objects.filter(
        ip_address=request.axes_ip_address,  # type: ignore[attr-defined]
        attempt_time__gte=get_cool_off_threshold(request),
    )
    return int(attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0)


def address_locked(request: HttpRequest) -> bool:
    return address_failures(request) >= settings.LOGIN_ADDRESS_FAILURE_LIMIT
