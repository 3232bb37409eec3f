"""What both modes of ``bench_runs`` share: the benchmark user, a question driven through the
real planner and ``runner.step`` until a stage is done, the run's kept claims with their
anchors, and the clean-up afterwards."""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import CommandError
from django.db import transaction

from ledger.models import Claim, EvidenceLink, Library
from research import runner, services
from research.models import Plan, Run, RunState

# --until: the state a run has reached once that stage is done.
UNTIL = {"mining": RunState.COUNTERING, "verifying": RunState.AWAITING_REVIEW}
BENCH_USER = "bench_runs"


def bench_user() -> Any:
    """The researcher the benchmark's plans belong to (made on first use, no password)."""
    user, created = get_user_model().objects.get_or_create(username=BENCH_USER)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    user.groups.add(*Group.objects.filter(name=services.RESEARCHER_GROUP))
    return user


def drive_run(
    user: Any, library: Library, question: str, until: str, scope: str = ""
) -> tuple[Run, float]:
    """Plan ``question`` over ``library`` with the configured planner, start the run and
    step it as a worker would until it reaches ``until`` (or stops); returns the run and
    the wall time from planning on."""
    clock = time.perf_counter()
    try:
        plan = services.check_create_plan(user, question, scope=scope, library=library)
        version = plan.current_version
        assert version is not None
        run = services.check_start_run(user, plan, version.number, enqueue=False)
    except services.PlanInvalid as exc:
        raise CommandError(f"{question!r}: {'; '.join(exc.messages)}") from exc
    while True:
        result = runner.step(run.code)
        if result.state == until or not result.again:
            break
    return Run.objects.get(pk=run.pk), time.perf_counter() - clock


def claims_with_anchors(run: Run) -> list[tuple[Claim, list[EvidenceLink]]]:
    """The run's kept claims in ledger order, each with its anchor links (snapshot and
    source loaded)."""
    links = EvidenceLink.objects.filter(claim__run=run, is_anchor=True).select_related(
        "snapshot__source"
    )
    anchors: dict[int, list[EvidenceLink]] = {}
    for link in links:
        anchors.setdefault(link.claim_id, []).append(link)
    claims = Claim.objects.filter(run=run).order_by("pk")
    return [(claim, anchors.get(claim.pk, [])) for claim in claims]


def delete_run(run: Run) -> None:
    """The benchmark's run and its plan, with everything they own."""
    with transaction.atomic():
        plan = Plan.objects.get(versions__runs=run)
        Run.objects.filter(plan_version__plan=plan).delete()
        plan.delete()
