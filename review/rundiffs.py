"""The only writer of RunDiff rows, and the carry-over of earlier decisions to a new run.

``do_carry_over(record)`` applies each carry-over that ``review.diff.compare`` planned:
a narrowed claim's text is re-verified against the new claim's evidence first and must
come out as it did; the history is then replayed on the new claim by
``review.services.decisions.do_carry_over_decisions`` (each decision recorded as carried over,
linked to the earlier one). A carry-over that does not apply moves to "needs review"
with the reason. ``do_record_run_diff`` stores the result (one row per run).
"""

from __future__ import annotations

from ledger.models import Claim
from research.models import Run
from review.diff import CarryOver, NeedsReview, RunDiffRecord, diff_runs, previous_run
from review.models import ReviewDecision, RunDiff
from review.services.decisions import DecisionRefused, do_carry_over_decisions
from review.services.reverify import reverify


def do_carry_over(record: RunDiffRecord) -> RunDiffRecord:
    """Carry the planned decisions over; returns the record as it turned out."""
    carried, refused = [], list(record.needs_review)
    for plan in record.carried_over:
        problem = _apply(plan)
        if problem is None:
            carried.append(plan)
        else:
            why = NeedsReview(
                claim=plan.claim, old_claim=plan.old_claim, text=plan.text, reasons=[problem]
            )
            refused.append(why)
    return record.model_copy(update={"carried_over": carried, "needs_review": refused})


def _apply(plan: CarryOver) -> str | None:
    claim = Claim.objects.select_related("run").get(code=plan.claim)
    if claim.decisions.exists():
        return None  # carried by an earlier attempt of this stage
    history = list(
        ReviewDecision.objects.filter(code__in=plan.decisions)
        .select_related("reviewer")
        .order_by("created_at", "pk")
    )
    reverification = None
    if plan.reverify:
        reverification = reverify(claim, plan.reverify)
        got = reverification.status or "not re-verified"
        if not reverification.available or got != plan.expect:
            return (
                f"the narrowed text re-verifies as {got.upper()} on this run's evidence "
                f"(it was {plan.expect.upper() or 'unknown'})"
            )
    try:
        do_carry_over_decisions(claim, history, reverification)
    except DecisionRefused as exc:
        return f"the earlier decisions do not apply: {exc}"
    return None


def do_record_run_diff(run: Run, against: Run, record: RunDiffRecord) -> RunDiff:
    row, _ = RunDiff.objects.update_or_create(
        run=run,
        defaults={
            "against": against,
            "data": record.model_dump(mode="json"),
            "carried_over": len(record.carried_over),
            "needs_review": len(record.needs_review),
        },
    )
    return row


def stored_record(row: RunDiff) -> RunDiffRecord:
    """The stored diff, parsed at the JSON boundary."""
    return RunDiffRecord.model_validate(row.data)


def run_diff_record(run: Run) -> RunDiffRecord | None:
    """The run's stored diff; else one computed against its previous run; else None."""
    row = RunDiff.objects.filter(run=run).first()
    if row is not None:
        return stored_record(row)
    earlier = previous_run(run)
    return diff_runs(earlier, run) if earlier is not None else None
