"""``python manage.py exportreport REPORT --format md|html|pdf|zip|bib|csl --out FILE``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.access import ReportNotFound, find_report, find_user
from reports.export import FORMATS, ExportBusy, ExportRefused, do_export_report
from reports.exports.pdf import PdfError


class Command(BaseCommand):
    help = (
        "Export a report version for scripts. REPORT is a report code, or a run code "
        "(its latest version, or --report-version N). Refused exports print every problem and "
        "exit non-zero; nothing is written then."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("report", help="report code, or run code")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS))
        parser.add_argument("--out", required=True, help="file to write ('-' for stdout)")
        parser.add_argument("--report-version", type=int, help="with a run code: this version")
        parser.add_argument("--user", help="username recorded on the export (default: none)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = find_report(options["report"], options["report_version"])
            user = find_user(options["user"]) if options["user"] else None
            export = do_export_report(report, options["format"], user)
        except (ReportNotFound, ExportBusy, PdfError) as exc:
            raise CommandError(str(exc)) from exc
        except ExportRefused as exc:
            for problem in exc.problems:
                self.stderr.write(f"REFUSED {problem}")
            raise CommandError("export refused: nothing written") from exc
        if options["out"] == "-":
            sys.stdout.buffer.write(export.data)
            sys.stdout.flush()
            return
        out = Path(options["out"])
        try:
            out.write_bytes(export.data)
        except OSError as exc:
            raise CommandError(f"{out}: cannot write ({exc})") from exc
        self.stderr.write(f"wrote {out} ({len(export.data)} bytes, {export.fmt})")
