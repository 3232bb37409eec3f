#!/usr/bin/env python
"""Django's command-line utility; points DATABASE_URL at the embedded Postgres when unset."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from config.embedded import ensure_database_url

    ensure_database_url()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
