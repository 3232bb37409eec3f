from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from ledger.models import Claim, Snapshot, Source
from research.models import Plan


@pytest.mark.django_db
def test_it_prints_render_figures_and_removes_its_scratch_run(tmp_path, author):
    out = StringIO()
    report = tmp_path / "ledger.json"
    call_command(
        "bench_ledger", "--claims", "60", "--rounds", "1", "--json", str(report), stdout=out
    )

    lines = dict(line.split(": ", 1) for line in out.getvalue().splitlines())
    assert lines["claims"] == "60"
    assert lines["requests"] == "10"
    assert float(lines["ledger_p95_ms"]) >= float(lines["ledger_p50_ms"]) > 0
    details = json.loads(report.read_text())
    assert set(details["variants"]) >= {"default", "search", "htmx_filter"}
    assert not Plan.objects.filter(question__startswith="[bench]").exists()
    assert Claim.objects.count() == Snapshot.objects.count() == Source.objects.count() == 0
