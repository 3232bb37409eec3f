"""Measure the semantic check of reports: its bar, and what it does to report sentences.

    python manage.py bench_report_check --nli ../shared/data/nli \\
        --sentences tests/fixtures/report_check/sentences.jsonl [--bar 0.85] [--json OUT]

Prints, for the entailment model ``REPORT_CHECK_MODEL`` selects, its precision and recall
of entailment on the NLI pairs held back from the shipped model's training at each bar
(and the lowest bar reaching 0.90 precision), then, with ``--sentences``, how report
sentences fare against the claims they cite at ``--bar`` (default
``REPORT_CHECK_ENTAILMENT``): the share of supported sentences kept, of unsupported ones
refused, and each sentence. Logic in ``research.bench.report_check``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from research.management.commands.bench_audit import machine


class Command(BaseCommand):
    help = "Figures of the semantic report check: its entailment bar and report sentences."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--nli", type=Path, help="the shared/data/nli folder")
        parser.add_argument("--sentences", type=Path, help="JSON lines of report sentences")
        parser.add_argument("--bar", type=float, default=None)
        parser.add_argument("--json", type=Path, help="write the figures here")

    def handle(self, *args: Any, **options: Any) -> None:
        from research.bench import report_check as bench
        from research.pipeline.verify.nli import configured_spec, load_scorer

        if not options["nli"] and not options["sentences"]:
            raise CommandError("give --nli, --sentences or both")
        spec = configured_spec(settings.REPORT_CHECK_MODEL)
        if spec is None:
            raise CommandError("REPORT_CHECK_MODEL=off: there is no model to measure")
        scorer = load_scorer(spec)
        bar = options["bar"] if options["bar"] is not None else settings.REPORT_CHECK_ENTAILMENT
        started = time.perf_counter()
        figures: dict[str, Any] = {"model": scorer.name, "machine": machine()}
        try:
            if options["nli"]:
                figures["held_back"] = bench.bar_table(options["nli"], scorer)
            if options["sentences"]:
                items = bench.read_sentences(options["sentences"])
                figures["sentences"] = bench.sentence_table(items, scorer, bar)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        figures["seconds"] = round(time.perf_counter() - started, 1)
        self._print(figures)
        if options["json"]:
            options["json"].write_text(json.dumps(figures, indent=1), encoding="utf-8")

    def _print(self, figures: dict[str, Any]) -> None:
        out = self.stdout.write
        out(f"model {figures['model']}")
        held = figures.get("held_back")
        if held:
            out(f"held-back NLI pairs: {held['pairs']} ({held['entailed']} entailed)")
            out("bar    called  precision  recall")
            for row in held["rows"]:
                out(
                    f"{row['bar']:<6} {row['called']:>6}  {row['precision']:>9.3f}  "
                    f"{row['recall']:>6.3f}"
                )
            out(f"lowest bar with precision >= 0.90: {held['chosen']}")
        table = figures.get("sentences")
        if table:
            out(
                f"report sentences at bar {table['bar']}: {table['sentences']}; supported kept "
                f"{table['supported_kept']:.3f}, unsupported refused "
                f"{table['unsupported_refused']:.3f}"
            )
            for name in ("lexical", "both"):
                figures_of = table[name]
                out(
                    f"  {name} check{'s' if name == 'both' else ''}: supported kept "
                    f"{figures_of['supported_kept']:.3f}, unsupported refused "
                    f"{figures_of['unsupported_refused']:.3f}"
                )
            for kind, counts in table["per_kind"].items():
                out(f"  {kind:<15} right {counts.get('right', 0)}  wrong {counts.get('wrong', 0)}")
            for row in table["rows"]:
                mark = "ok " if row["got"] == row["expect"] else "BAD"
                out(
                    f"  {mark} {row['field']:<9} {row['kind']:<14} {row['got']:<6} "
                    f"{row['entailment']:.2f}  lexical {row['lexical']:<6}  {row['sentence']}"
                )
        m = figures["machine"]
        out(f"machine: {m}; {figures['seconds']} s")
