"""bench_load: a real server on loopback, logged-in clients, the contract's figures."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from ledger.models import Claim

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_loads_the_ledger_and_capsule_pages_and_prints_the_contract_keys():
    out = StringIO()
    call_command(
        "bench_load",
        "--clients",
        "3",
        "--seconds",
        "3",
        "--processes",
        "2",
        "--claims",
        "20",
        stdout=out,
    )
    figures = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    for key in ("p50_ms", "p95_ms", "max_ms", "errors", "requests_per_s"):
        float(figures[key])
    assert int(figures["errors"]) == 0 and int(figures["requests"]) > 0
    assert float(figures["p50_ms"]) <= float(figures["p95_ms"]) <= float(figures["max_ms"])
    assert not Claim.objects.exists()  # the scratch run is gone


def test_it_refuses_an_unbounded_load():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="bounded load"):
        call_command("bench_load", "--clients", "5000", "--seconds", "1")
