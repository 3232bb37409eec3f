"""A real run, not factories: pipeline → review → report → every export → re-run diff.

The fixture library is ingested through the real ingest service; the run goes through
every stage with the offline defaults; the reviewer decides through the review services;
then one source's content changes and the plan is run again.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from ledger.models import Candidate, CandidateState, Claim, DispositionState, Verdict
from ledger.services.ingest import ingest_documents
from ledger.services.sparse_index import sync_sparse_index
from reports.build import do_build_report
from reports.export import do_export_report
from research import runner, services
from research.models import Run, RunState
from review.diff import diff_runs
from review.services.decisions import (
    approval_refusal,
    do_approve_claim,
    do_reject_claim,
    is_override,
)
from review.services.gate import gate_policy, gate_status
from tests.factories import add_member
from tests.reports.bundles import bundle_problems
from tests.research.fixtures import DOCUMENTS, fixture_document, ingest_fixture_library
from tests.research.test_runner import small_plan

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
LIBRARY = "fixture-vitamin-d"


def _review_everything(run: Run, reviewer) -> tuple[list[Claim], list[Claim]]:
    """Approve what may be approved, reject the rest with a reason."""
    approved, rejected = [], []
    for claim in Claim.objects.filter(run=run).order_by("pk"):
        if approval_refusal(claim, reviewer, gate_policy(run.plan_version.plan)):
            do_reject_claim(reviewer, claim, claim.version, "unsupported", "e2e test")
            rejected.append(claim)
        else:
            note = "e2e test: the reviewer read the source" if is_override(claim) else ""
            do_approve_claim(reviewer, claim, claim.version, note)
            approved.append(claim)
    return approved, rejected


def _assert_every_claim_went_through_verification(run: Run) -> None:
    """Acceptance: mining drops are candidates, so every claim row was searched and judged."""
    claims = list(Claim.objects.filter(run=run).prefetch_related("evidence", "votes"))
    assert claims, "the fixture library should yield claims"
    for claim in claims:
        name = f"claim {claim.pk} “{claim.text[:60]}”"
        assert claim.status != Verdict.PENDING, name
        assert any(link.quote for link in claim.evidence.all()), name
        assert claim.votes.all(), name
        assert claim.rationale.strip(), name
        assert claim.disposition != DispositionState.PENDING, name
        assert claim.counter_evidence, name
    candidates = Candidate.objects.filter(run=run)
    assert candidates.exists(), "mining should record the candidates it considered"
    dropped = candidates.filter(state=CandidateState.DROPPED)
    assert all(c.reason.strip() for c in dropped), [c.text for c in dropped if not c.reason]
    kept = candidates.filter(state=CandidateState.KEPT)
    assert {c.claim_id for c in kept} == {c.pk for c in claims}


def _change_one_source() -> str:
    """Ingest an edited text for document 1 (a new snapshot of the same Source)."""
    title, body = DOCUMENTS[0]
    edited = body.replace("43 percent", "29 percent")
    assert edited != body
    [result] = ingest_documents(
        [fixture_document(LIBRARY, 1, title, edited)], ingest_fixture_library(LIBRARY)
    )
    assert result.status == "new_snapshot", result
    sync_sparse_index()
    return f"corpus:{LIBRARY}:1"


def test_it_goes_from_a_real_run_to_verified_exports_and_diffs_a_rerun(author, reviewer, tmp_path):
    library = ingest_fixture_library(LIBRARY)
    plan = services.do_create_plan(author, small_plan(), library=library)
    add_member(plan, reviewer)
    first = runner.run_to_end(services.check_start_run(author, plan, 1).code)
    assert first.state == RunState.AWAITING_REVIEW
    _assert_every_claim_went_through_verification(first)

    approved, rejected = _review_everything(first, reviewer)
    assert approved, "the fixture library should yield at least one approvable claim"
    assert gate_status(first).open

    report = do_build_report(first, author)
    dropped = Candidate.objects.filter(run=first, state=CandidateState.DROPPED).count()
    assert len(report.outline["appendix_a_set_aside"]) == dropped
    texts = {
        fmt: do_export_report(report, fmt, author).data
        for fmt in ("md", "html", "pdf", "zip", "bib", "csl")
    }
    assert texts["pdf"].startswith(b"%PDF")
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(texts["zip"])
    assert bundle_problems(bundle) == []
    # Excluded claim text never reaches an export, except where the very same words are a
    # verbatim quote cited for an approved claim (docs/reports.md: the source said them).
    quotes = [row["quote"] for row in report.outline["appendix_b"]]
    for claim in rejected:
        if any(claim.text in quote for quote in quotes):
            continue
        for fmt in ("md", "html", "bib", "csl"):
            assert claim.text.encode() not in texts[fmt], (fmt, claim.text)
        with zipfile.ZipFile(io.BytesIO(texts["zip"])) as archive:
            for name in archive.namelist():
                if not name.startswith("snapshots/"):
                    assert claim.text.encode() not in archive.read(name), name
    assert any(
        claim.text.encode() in texts["md"] for claim in approved if claim.status == Verdict.PASS
    )

    changed = _change_one_source()
    rerun = runner.run_to_end(services.check_start_run(author, plan, 1).code)
    assert rerun.state == RunState.AWAITING_REVIEW
    diff = diff_runs(first, rerun)
    # Exactly the one source whose content changed shows up as changed; nothing vanished.
    assert [(c.canonical_id, c.kind) for c in diff.sources_changed] == [(changed, "changed")]
    assert diff.sources_gone == [] and diff.sources_new == []
    # Every decided claim that quoted it is flagged for re-review, saying so; any other
    # flag says its evidence passages differ (retrieval ranks the new snapshot differently).
    quoted_changed = {
        str(c.code)
        for c in Claim.objects.filter(
            run=first, evidence__snapshot__source__canonical_id=changed, decisions__isnull=False
        ).distinct()
    }
    flags = {flag.claim: flag.reasons for flag in diff.rereview}
    assert quoted_changed and quoted_changed <= set(flags)
    assert quoted_changed == set(diff.sources_changed[0].claims)
    for code, reasons in flags.items():
        if code in quoted_changed:
            assert any(f"{changed} changed" in r for r in reasons), reasons
        else:
            assert reasons == ["evidence passages differ from the ones reviewed"], reasons
