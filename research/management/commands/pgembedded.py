"""Start, stop or report the embedded PostgreSQL that serves when DATABASE_URL is unset."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from config import embedded


class Command(BaseCommand):
    help = "Manage the embedded PostgreSQL (start | stop | status | url)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["start", "stop", "status", "url"])

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "start":
            self.stdout.write(f"embedded Postgres at {embedded.start()}")
        elif action == "stop":
            self.stdout.write(embedded.stop())
        elif action == "url":
            self.stdout.write(embedded.start())
        else:
            self.stdout.write(embedded.status())
