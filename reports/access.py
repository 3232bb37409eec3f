"""Who may see a report and who may build one; finding a report by its code.

The plan's owner and its reviewers build reports; anyone who sees the plan sees its
reports (``get_report_for_user``: 404 for a stranger). ``find_report``/``find_user`` are
the command line's look-ups (``exportreport``).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.http import Http404

from reports.models import Report
from research.models import Plan, Run
from review.services.access import can_decide


def can_build_report(user: Any, plan: Plan) -> bool:
    """The plan's owner and its reviewers build reports; read-only members do not."""
    return bool(user.pk == plan.owner_id or can_decide(user, plan))


def get_report_for_user(user: Any, code: UUID) -> Report:
    report = Report.objects.select_related("run__plan_version__plan").filter(code=code).first()
    if report is None or not report.run.plan_version.plan.is_visible_to(user):
        raise Http404("No such report")
    return report


def run_reports(run: Run) -> list[Report]:
    return list(Report.objects.filter(run=run).order_by("-version"))


class ReportNotFound(Exception):
    """No report or user by that name (the command line); the message says which."""


def find_report(code: str, version: int | None = None) -> Report:
    """A report by its code, or a run's report (latest, or ``version``) by the run's code."""
    try:
        uuid = UUID(code)
    except ValueError as exc:
        raise ReportNotFound(f"{code!r} is not a report or run code (a UUID)") from exc
    report = Report.objects.filter(code=uuid).first()
    if report is not None:
        if version is not None and report.version != version:
            raise ReportNotFound(f"report {code} is version {report.version}, not {version}")
        return report
    found = Report.objects.filter(run__code=uuid).order_by("-version")
    report = (found.filter(version=version) if version is not None else found).first()
    if report is None:
        what = f"version {version}" if version is not None else "report"
        raise ReportNotFound(f"no report {code} and no {what} of a run {code}")
    return report


def find_user(username: str) -> Any:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ReportNotFound(f"no user {username!r}")
    return user
