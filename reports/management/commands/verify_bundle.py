"""``python manage.py verify_bundle FILE [--public-key KEY]``: re-check a bundle offline."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.exports.verify import BundleUnreadable, trusted_key, verify_bundle


class Command(BaseCommand):
    help = (
        "Check a report bundle: its signature (by --public-key, else this instance's key), "
        "every hash, every quote at its offsets, every claim text against its fingerprint "
        "and every cited claim's approval."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the bundle ZIP exported with a report")
        parser.add_argument(
            "--public-key",
            help="the signer's public key: a PEM file, or base64 (the /about/ page shows it); "
            "default: this instance's key",
        )
        parser.add_argument(
            "--all",
            action="store_true",
            help="run every check even after one fails (by default it stops at the first: "
            "a bundle whose signature fails is not read further)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            problems = verify_bundle(
                options["file"], trusted_key(options["public_key"]), keep_going=options["all"]
            )
        except BundleUnreadable as exc:
            raise CommandError(str(exc)) from exc
        if problems:
            for problem in problems:
                self.stderr.write(f"FAIL {problem}")
            raise CommandError(f"{len(problems)} problem(s): the bundle does not verify")
        self.stdout.write("ok: signature, every hash, quote, fingerprint and cited claim check out")
