"""Background tasks: thin wrappers that load rows, call services, enqueue the next step."""

from __future__ import annotations

from django.db import connection
from procrastinate.contrib.django import app


@app.task(name="research.count_on_run", queue="default")
def count_on_run(run_code: str, key: str) -> None:
    """Atomically add one to ``run.counters[key]``.

    The smallest real task: it proves a job reached a worker and ran exactly once
    (a job run twice would leave 2).
    """
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE research_run
               SET counters = counters || jsonb_build_object(
                       %s::text, COALESCE((counters ->> %s)::int, 0) + 1)
             WHERE code = %s
            """,
            [key, key, run_code],
        )
