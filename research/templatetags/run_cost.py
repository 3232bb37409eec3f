"""The run page's figures of time and model use, read from the stage checkpoints' counters.

``{{ cp|stage_cost }}`` is a stage's :class:`~research.providers.usage.Cost` (summed over
its attempts), ``{{ checkpoints|run_cost }}`` the run's, and ``{{ cp|stage_counts }}``
the stage's own counters without its time and cost (shown in their own columns).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template

from research.models import StageCheckpoint
from research.providers.usage import Cost, total

register = template.Library()

NOT_COUNTS = ("wall_s", "cost")


@register.filter
def stage_cost(cp: StageCheckpoint) -> Cost:
    return Cost.from_json(cp.counters.get("cost"))


@register.filter
def run_cost(checkpoints: Iterable[StageCheckpoint]) -> Cost:
    return total(stage_cost(cp) for cp in checkpoints)


@register.filter
def stage_counts(cp: StageCheckpoint) -> list[tuple[str, Any]]:
    return [(key, value) for key, value in cp.counters.items() if key not in NOT_COUNTS]
