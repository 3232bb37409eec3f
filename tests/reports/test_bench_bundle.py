"""``bench_bundle`` builds a valid signed bundle and reports verify_bundle's memory."""

from __future__ import annotations

import json

from django.core.management import call_command


def test_it_verifies_its_bundle_and_prints_every_figure(tmp_path, capsys):
    out = tmp_path / "bench.json"
    call_command("bench_bundle", "--size-mb", "1", "--json", str(out))
    printed = dict(line.split(": ") for line in capsys.readouterr().out.strip().splitlines())
    figures = json.loads(out.read_text())
    assert set(printed) == set(figures) == {
        "bundle_mb", "uncompressed_mb", "problems", "verify_s", "baseline_rss_mb", "peak_rss_mb"
    }  # fmt: skip
    assert figures["problems"] == 0  # a valid bundle: every check ran and passed
    assert figures["bundle_mb"] > 0.5 and figures["uncompressed_mb"] > figures["bundle_mb"]
    assert figures["peak_rss_mb"] >= figures["baseline_rss_mb"] > 0
