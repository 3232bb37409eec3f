"""Operations on plans and runs; views, commands, tasks and stages call these.

One module per row kind: :mod:`~research.services.plans` (plans and their versions),
:mod:`~research.services.runs` (runs: start, cancel, queue, transitions, counters) and
:mod:`~research.services.checkpoints` (stage checkpoints). The names views and commands
use are re-exported here.
"""

from __future__ import annotations

from research.roles import RESEARCHER_GROUP, can_edit_plan, can_edit_plans
from research.services.audits import check_import_report, imported_summary
from research.services.members import check_share_plan, check_unshare_plan, plan_members
from research.services.plans import (
    MAX_SCOPE_CHARS,
    PlanConflict,
    PlanInvalid,
    check_create_plan,
    check_edit_plan,
    check_save_plan,
    check_update_plan_library,
    check_update_plan_scope,
    current_content,
    do_create_plan,
    get_editable_plan_for_user,
    get_owned_plan_for_user,
    get_plan_for_user,
    get_run_for_user,
    plan_edit,
    plans_for_user,
)
from research.services.runs import (
    CANCELLABLE_STATES,
    RunRefused,
    check_start_run,
    do_request_cancel,
    do_start_run,
    do_start_synthesis,
    enabled_web_adapters,
    run_config,
    start_blockers,
)

__all__ = [
    "CANCELLABLE_STATES",
    "MAX_SCOPE_CHARS",
    "RESEARCHER_GROUP",
    "PlanConflict",
    "PlanInvalid",
    "RunRefused",
    "can_edit_plan",
    "can_edit_plans",
    "check_share_plan",
    "check_unshare_plan",
    "check_create_plan",
    "check_import_report",
    "check_edit_plan",
    "check_save_plan",
    "check_start_run",
    "check_update_plan_library",
    "check_update_plan_scope",
    "current_content",
    "do_create_plan",
    "do_request_cancel",
    "do_start_run",
    "do_start_synthesis",
    "enabled_web_adapters",
    "get_editable_plan_for_user",
    "get_owned_plan_for_user",
    "get_plan_for_user",
    "get_run_for_user",
    "imported_summary",
    "plan_edit",
    "plan_members",
    "plans_for_user",
    "run_config",
    "start_blockers",
]
