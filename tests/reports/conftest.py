"""A reviewed run: approved, rejected, failed and unreviewed claims over real snapshots."""

from __future__ import annotations

import pytest

from ledger.models import Verdict
from review.services.decisions import do_approve_claim, do_reject_claim
from tests.factories import make_claim, make_passage, make_plan, make_run, make_snapshot

APPROVED = [
    "Aspirin reduces the risk of a second heart attack in adults.",
    "Regular exercise may lower blood pressure in older adults.",
]
REJECTED = "Vitamin C cures the common cold within two days."
FAILED = "Coffee doubles the lifespan of office workers."
UNREVIEWED = "Green tea improves memory in healthy students."
WITHHELD = [REJECTED, FAILED, UNREVIEWED]


def claim_from_source(run, text, *, title, sub=None, **fields):
    """A claim whose quote is a sentence of its own snapshot, in a source of its own."""
    snapshot = make_snapshot(
        f"Introduction to {title}. {text} The authors list several limitations.",
        title=title,
        canonical_id=f"url:https://example.org/{title.lower().replace(' ', '-')}",
    )
    passage = make_passage(snapshot)
    return make_claim(run, text, quote=text, passage=passage, subquestion=sub, **fields)


@pytest.fixture
def plan(author, reviewer, researcher):
    return make_plan(author, members=(reviewer, researcher))


@pytest.fixture
def run(plan):
    return make_run(plan)


@pytest.fixture
def sub(run):
    return run.plan_version.subquestions.first()


@pytest.fixture
def scene(run, sub, reviewer):
    """Two approved claims; one rejected, one failed-and-rejected, one left unreviewed."""
    approved = [
        claim_from_source(run, APPROVED[0], title="Aspirin trial", sub=sub, confidence=0.9),
        claim_from_source(
            run,
            APPROVED[1],
            title="Exercise cohort",
            sub=sub,
            confidence=0.7,
            allowed_scope="adults over 65 in observational cohorts",
        ),
    ]
    rejected = claim_from_source(run, REJECTED, title="Vitamin blog", sub=sub)
    failed = claim_from_source(run, FAILED, title="Coffee news", sub=sub, status=Verdict.FAIL)
    unreviewed = claim_from_source(run, UNREVIEWED, title="Tea study", sub=sub)
    for claim in approved:
        do_approve_claim(reviewer, claim, claim.version, note="read the source: it states this")
    do_reject_claim(reviewer, rejected, rejected.version, "unsupported")
    do_reject_claim(reviewer, failed, failed.version, "contradicted", "two trials")
    return {"approved": approved, "rejected": rejected, "failed": failed, "unreviewed": unreviewed}
