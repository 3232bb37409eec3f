"""``python manage.py verify_bundle FILE``: re-check a reproducibility bundle offline."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from review.exports.bundle import BundleUnreadable, verify_bundle


class Command(BaseCommand):
    help = "Re-check every hash, every quote at its offsets and every cited claim's approval."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the bundle ZIP exported with a report")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            problems = verify_bundle(options["file"])
        except BundleUnreadable as exc:
            raise CommandError(str(exc)) from exc
        if problems:
            for problem in problems:
                self.stderr.write(f"FAIL {problem}")
            raise CommandError(f"{len(problems)} problem(s): the bundle does not verify")
        self.stdout.write("ok: every hash, quote and cited claim checks out")
