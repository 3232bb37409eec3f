"""A real procrastinate worker whose library searches each take a second longer.

Tests only: ``python -m tests.research.slow_worker NAME`` starts the production worker
command in a process where every ``LibraryAdapter.search`` call first sleeps
``SLOW_SEARCH_S`` seconds. On a quiet machine with warm Postgres buffers the seven library
searches of a small plan finish faster than a test can poll, so a test that must catch the
search stage half done (and kill the worker there) slows the searches instead of hoping
the machine is busy.
"""

from __future__ import annotations

import os
import sys
import time

SLOW_SEARCH_S = 1.0


def main(name: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from research.stages import adapters

    original = adapters.LibraryAdapter.search

    def slow(self, text, query_class, limit):
        time.sleep(SLOW_SEARCH_S)
        return original(self, text, query_class, limit)

    adapters.LibraryAdapter.search = slow  # type: ignore[method-assign]
    call_command("procrastinate", "worker", "--name", name)


if __name__ == "__main__":
    main(sys.argv[1])
