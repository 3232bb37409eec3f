"""Plan a question (or import a report to audit) and run it synchronously through the same
stage code the workers use."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger.models import CandidateState, Library
from ledger.readers import candidate_counts, ledger_gaps
from research import runner, services
from research.models import Plan, Run


class Command(BaseCommand):
    help = (
        "Plan a question (or take an existing plan, or import a report to audit) and run it "
        "to the review gate in this process; prints key: value lines (wall time, per-stage "
        "seconds, counts)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--question", help="A new plan is proposed for this question.")
        source.add_argument("--plan", help="Code of an existing plan (its current version).")
        source.add_argument(
            "--report",
            type=Path,
            help="A report another engine wrote (Markdown, HTML, text or JSON {text, "
            "citations}): imported as an audit plan, its claims checked against what it cites.",
        )
        parser.add_argument(
            "--audited",
            type=Path,
            help="With --report: write the audited report (Markdown) here after the run.",
        )
        parser.add_argument("--library", help="Name of the library to search.")
        parser.add_argument(
            "--scope",
            default="",
            help="The new plan's scope (population, designs preferred, years), as a "
            "researcher would type it; mining applies it.",
        )
        parser.add_argument("--user", help="Owner of a new plan (default: first superuser).")
        parser.add_argument("--json", type=Path, help="Also write the figures and details here.")

    def handle(self, *args: Any, **options: Any) -> None:
        user = self._user(options["user"])
        plan = self._plan(user, options)
        version = plan.current_version
        if version is None:
            raise CommandError("The plan has no version.")
        try:
            run = services.check_start_run(user, plan, version.number, enqueue=False)
        except services.PlanInvalid as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stderr.write(f"run {run.code} of plan {plan.code} (version {run.plan_version.number})")
        clock = time.perf_counter()
        run = runner.run_to_end(run.code, on_step=lambda r: self.stderr.write(f"  -> {r.state}"))
        figures = run_figures(run, time.perf_counter() - clock)
        for key, value in figures.items():
            self.stdout.write(f"{key}: {value}")
        if options["json"]:
            details = {
                **figures,
                "run": str(run.code),
                "plan": str(plan.code),
                "scope": run.plan_version.plan.scope,
                "stop_reason": run.stop_reason,
                "error": run.error,
                "stages": stage_details(run),
            }
            options["json"].write_text(json.dumps(details, indent=2))
        if options["audited"]:
            from review.audited import render_markdown
            from review.audits import audited_report

            options["audited"].write_text(render_markdown(audited_report(run)))

    def _user(self, username: str | None) -> Any:
        """The named user; else the first superuser; else a ``runplan`` researcher account."""
        users = get_user_model().objects
        if username:
            user = users.filter(username=username).first()
            if user is None:
                raise CommandError(f"No user named {username!r}.")
            return user
        user = users.filter(is_superuser=True).order_by("pk").first()
        if user is None:
            user, created = users.get_or_create(username="runplan")
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            user.groups.add(*Group.objects.filter(name=services.RESEARCHER_GROUP))
        return user

    def _plan(self, user: Any, options: dict[str, Any]) -> Plan:
        library = None
        if options["library"]:
            library = Library.objects.filter(name=options["library"]).first()
            if library is None:
                raise CommandError(f"No library named {options['library']!r}.")
        if options["report"]:
            path: Path = options["report"]
            if not path.is_file():
                raise CommandError(f"No report file at {path}.")
            try:
                return services.check_import_report(
                    user, path.read_bytes(), filename=path.name, library=library
                )
            except services.PlanInvalid as exc:
                raise CommandError("; ".join(exc.messages)) from exc
        if options["plan"]:
            if options["scope"]:
                raise CommandError(
                    "--scope is for a new plan (--question); an existing plan keeps its scope."
                )
            plan = services.get_plan_for_user(user, options["plan"])
            if library is not None:
                services.check_update_plan_library(user, plan, library)
            return plan
        try:
            return services.check_create_plan(
                user, options["question"], scope=options["scope"], library=library
            )
        except services.PlanInvalid as exc:
            raise CommandError("; ".join(exc.messages)) from exc


def run_figures(run: Run, wall_s: float) -> dict[str, Any]:
    """The figures a benchmark reports: state, wall time, seconds per stage, counts."""
    candidates = candidate_counts(run)
    figures: dict[str, Any] = {"state": run.state, "wall_s": round(wall_s, 1)}
    for cp in run.checkpoints.order_by("pk"):
        key = f"stage_{cp.stage}_s"
        figures[key] = round(figures.get(key, 0.0) + float(cp.counters.get("wall_s", 0.0)), 2)
    for key in ("queries", "hits", "sources", "passages", "claims"):
        figures[key] = run.counters.get(key, 0)
    figures["rounds"] = run.counters.get("round", 0) + 1
    for status in ("pass", "fail", "uncertain", "pending"):
        figures[f"claims_{status}"] = run.claims.filter(status=status).count()
    for state in CandidateState.values:
        figures[f"candidates_{state}"] = candidates[state]
    for gap, count in ledger_gaps(run).items():
        figures[f"ledger_{gap}"] = count
    return figures


def stage_details(run: Run) -> list[dict[str, Any]]:
    return [
        {
            "stage": cp.stage,
            "round": cp.round,
            "status": cp.status,
            "attempts": cp.attempts,
            "counters": cp.counters,
            "notes": cp.notes,
            "error": cp.error,
        }
        for cp in run.checkpoints.order_by("pk")
    ]
