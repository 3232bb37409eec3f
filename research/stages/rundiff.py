"""Run diff stage step: when a run reaches review, compare it with the earlier run of its
plan, carry unchanged decisions over and store the ``RunDiff`` row.

Runs at the end of verifying (the run's ledger is complete): load both runs' claim
references (``review.diff.claim_refs``), compare them (``review.diff.compare``, pure),
then save: carry the planned decisions over (``review.rundiffs.do_carry_over``) and
store the result (``do_record_run_diff``). A retried step carries nothing twice (a
claim that has decisions is skipped) and overwrites the row.
"""

from __future__ import annotations

from research.models import Run
from research.stages.base import StageContext
from review import rundiffs
from review.diff import RunDiffRecord, claim_refs, compare, previous_run, source_titles


def run(ctx: StageContext) -> None:
    record = diff_and_carry_over(ctx.run)
    if record is None:
        ctx.note("run diff", "no earlier reviewed run of this plan to compare with")
        return
    ctx.note(
        "run diff",
        f"against run {record.old_run}: {len(record.carried_over)} decision(s) carried over, "
        f"{len(record.needs_review)} claim(s) need review",
    )
    ctx.count(carried_over=len(record.carried_over), needs_review=len(record.needs_review))


def diff_and_carry_over(run: Run) -> RunDiffRecord | None:
    """1. load the earlier run and both ledgers; 2. compare; 3. carry over and store."""
    earlier = previous_run(run)
    if earlier is None:
        return None
    titles = source_titles(earlier, run)
    record = compare(claim_refs(earlier), claim_refs(run), titles, str(earlier.code), str(run.code))
    record = rundiffs.do_carry_over(record)
    rundiffs.do_record_run_diff(run, earlier, record)
    return record
