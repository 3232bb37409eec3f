#!/usr/bin/env python
"""Django's command-line utility; points DATABASE_URL at the embedded Postgres when unset
(as the application role, or as the owner for ``OWNER_COMMANDS``).

``manage.py pgembedded status|stop`` runs before that, so it never starts the server.
"""

from __future__ import annotations

import os
import sys

# Commands that change the schema run as the embedded database's owner; everything else
# (the app, workers, imports) as the application role (config/embedded.py).
OWNER_COMMANDS = frozenset({"migrate", "createcachetable", "flush"})
UNDEFINED_TABLE = "42P01"  # PostgreSQL's SQLSTATE for a relation that does not exist


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if sys.argv[1:2] == ["pgembedded"] and sys.argv[2:3] in (["status"], ["stop"]):
        # Report on (or stop) the embedded server without starting it first, as loading
        # Django's settings would.
        from config import embedded

        print(embedded.status() if sys.argv[2] == "status" else embedded.stop())
        return
    from config.embedded import ensure_database_url

    ensure_database_url(owner=len(sys.argv) > 1 and sys.argv[1] in OWNER_COMMANDS)
    from django.core.management import execute_from_command_line
    from django.db.utils import ProgrammingError

    try:
        execute_from_command_line(sys.argv)
    except ProgrammingError as exc:
        if getattr(exc.__cause__, "sqlstate", None) != UNDEFINED_TABLE:
            raise
        # A command run before the first `make run` (or `manage.py migrate`): say so in
        # one line instead of a traceback; nothing was written.
        table = str(exc.__cause__).splitlines()[0]
        sys.exit(f"{table}: the database is not migrated; run `make run` or `manage.py migrate`")


if __name__ == "__main__":
    main()
