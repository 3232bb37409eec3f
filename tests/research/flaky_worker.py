"""A real procrastinate worker whose first library search fails with a retryable error.

Tests only: ``python -m tests.research.flaky_worker NAME`` starts the production worker
command in a process where the first ``LibraryAdapter.search`` call raises a retryable
``ProviderError`` (a library that reset its connection once) and later calls search
as usual, so the queue's retry of the step can be watched from outside.
"""

from __future__ import annotations

import os
import sys


def main(name: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from research.providers.base import ProviderError
    from research.stages import adapters

    original = adapters.LibraryAdapter.search
    failed: list[str] = []

    def flaky(self, text, query_class, limit):
        if not failed:
            failed.append(text)
            raise ProviderError("connection reset", permanent=False, provider="library")
        return original(self, text, query_class, limit)

    adapters.LibraryAdapter.search = flaky  # type: ignore[method-assign]
    call_command("procrastinate", "worker", "--name", name)


if __name__ == "__main__":
    main(sys.argv[1])
