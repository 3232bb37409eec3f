"""Compare shadow verdicts, counted verdicts and reviewer decisions, per run and overall.

    python manage.py shadow_report [--run CODE ...] [--json OUT]

Prints ``key: value`` lines (claims, with_shadow, shadow_changed, reviewer agreement of
the counted and of the shadow verdicts) and the tables behind them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from research.models import Run
from review.shadow import DECISIONS, VERDICTS, Agreement, shadow_report


class Command(BaseCommand):
    help = "Shadow vs counted verdicts vs reviewer decisions, per run and overall."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--run", action="append", default=[], help="run code (repeat)")
        parser.add_argument("--json", type=Path, default=None)

    def handle(self, *args: Any, **opts: Any) -> None:
        runs = Run.objects.order_by("pk")
        if opts["run"]:
            runs = runs.filter(code__in=opts["run"])
            if runs.count() != len(set(opts["run"])):
                raise CommandError("no such run: check the codes given with --run")
        report = shadow_report(runs)
        for run, agreement in report.runs:
            self._print(f"run {run.code}", agreement)
        self._print("overall", report.overall)
        if opts["json"]:
            payload = {
                "overall": _as_json(report.overall),
                "runs": {str(run.code): _as_json(a) for run, a in report.runs},
            }
            opts["json"].write_text(json.dumps(payload, indent=1))

    def _print(self, title: str, a: Agreement) -> None:
        agree, decided = a.agreement(a.decisions)
        s_agree, s_decided = a.agreement(a.shadow_decisions)
        self.stdout.write(f"# {title}")
        self.stdout.write(f"claims: {a.claims}")
        self.stdout.write(f"with_shadow: {a.with_shadow}")
        self.stdout.write(f"shadow_changed: {a.shadow_changed}")
        self.stdout.write(f"reviewer_agreement: {_ratio(agree, decided)} ({agree}/{decided})")
        self.stdout.write(
            f"shadow_reviewer_agreement: {_ratio(s_agree, s_decided)} ({s_agree}/{s_decided})"
        )
        self.stdout.write("counted verdict x reviewer decision: " + _table(a.decisions))
        if a.with_shadow:
            self.stdout.write("counted x shadow verdict: " + _table(a.shadow_vs_counted, VERDICTS))


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "n/a"


def _table(table: dict[str, dict[str, int]], columns: list[Any] | None = None) -> str:
    cols = [str(c) for c in (columns or DECISIONS)]
    return (
        "; ".join(
            f"{row}: " + ", ".join(f"{c}={table[row].get(c, 0)}" for c in cols if table[row].get(c))
            for row in (str(v) for v in VERDICTS)
            if row in table
        )
        or "none"
    )


def _as_json(a: Agreement) -> dict[str, Any]:
    agree, decided = a.agreement(a.decisions)
    s_agree, s_decided = a.agreement(a.shadow_decisions)
    return {
        "claims": a.claims,
        "with_shadow": a.with_shadow,
        "shadow_changed": a.shadow_changed,
        "reviewer_agreement": [agree, decided],
        "shadow_reviewer_agreement": [s_agree, s_decided],
        "decisions": a.decisions,
        "shadow_vs_counted": a.shadow_vs_counted,
        "shadow_decisions": a.shadow_decisions,
    }
