"""Acceptance: a real run whose claims cite chunk and section links with equal spans.

The library is ingested through the real ingest service; the run goes through every
stage with the offline defaults; the reviewer decides through the review services; the
report is built by the synthesizing stage (one worker step); every format is downloaded
twice through the web; the bundle verifies, and forged copies of it do not.
"""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.urls import reverse

from ledger.models import Claim, EvidenceLink, Relation
from reports.build import check_request_report
from reports.export import FORMATS
from reports.integrity import report_document
from research import runner, services
from research.models import Run, RunState
from research.pipeline.records import parse_plan
from review.services.decisions import (
    approval_refusal,
    do_approve_claim,
    do_reject_claim,
    is_override,
)
from review.services.gate import gate_policy
from tests.factories import add_member
from tests.reports.bundles import bundle_problems, remanifest, write_zip, zip_text
from tests.reports.library import ingest_long_library, vitamin_d_plan
from tests.reports.test_bundle import forge_text

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def review_everything(run: Run, reviewer) -> tuple[list[Claim], list[Claim]]:
    """Approve what may be approved, reject the rest with a reason."""
    approved, rejected = [], []
    policy = gate_policy(run.plan_version.plan)
    for claim in Claim.objects.filter(run=run).order_by("pk"):
        if approval_refusal(claim, reviewer, policy):
            do_reject_claim(reviewer, claim, claim.version, "unsupported", "e2e test")
            rejected.append(claim)
        else:
            note = "e2e test: the reviewer read the source" if is_override(claim) else ""
            do_approve_claim(reviewer, claim, claim.version, note)
            approved.append(claim)
    return approved, rejected


def reviewed_run(author, reviewer) -> tuple[Run, list[Claim], list[Claim]]:
    plan = services.do_create_plan(
        author, parse_plan(vitamin_d_plan()), library=ingest_long_library()
    )
    add_member(plan, reviewer)
    run = runner.run_to_end(services.check_start_run(author, plan, 1).code)
    assert run.state == RunState.AWAITING_REVIEW
    approved, rejected = review_everything(run, reviewer)
    return run, approved, rejected


def equal_span_pairs(claims: list[Claim]) -> list[tuple[EvidenceLink, EvidenceLink]]:
    """Supporting links of one claim quoting the same span through different passages."""
    pairs = []
    for claim in claims:
        seen: dict[tuple[int, int, int], EvidenceLink] = {}
        for link in claim.evidence.filter(relation=Relation.SUPPORTS).select_related("passage"):
            key = (link.snapshot_id, link.quote_start, link.quote_end)
            other = seen.setdefault(key, link)
            if other is not link and other.passage.fingerprint != link.passage.fingerprint:
                pairs.append((other, link))
    return pairs


def test_it_exports_every_format_twice_identically_and_proves_the_bundle(
    client, author, reviewer, tmp_path
):
    run, approved, rejected = reviewed_run(author, reviewer)
    pairs = equal_span_pairs(approved)
    assert pairs, "the library should give approved claims chunk and section links"
    assert {(a.passage.kind, b.passage.kind) for a, b in pairs} & {
        ("chunk", "section"),
        ("section", "chunk"),
    }

    check_request_report(reviewer, run, enqueue=False)
    run = runner.run_to_end(run.code)  # the synthesizing stage, as a worker runs it
    assert run.state == RunState.DONE
    report = run.reports.get()
    document = report_document(report)
    merged = [row for row in document.appendix_b if len(row.passages) > 1]
    assert merged and {p.kind for p in merged[0].passages} == {"chunk", "section"}

    client.force_login(author)
    downloads: dict[str, bytes] = {}
    for fmt in FORMATS:
        url = reverse("review-export-report", args=[report.code, fmt])
        first, second = client.get(url), client.get(url)
        assert (first.status_code, second.status_code) == (200, 200), (fmt, first.content[:300])
        assert first.content == second.content, fmt
        downloads[fmt] = first.content

    # What users download is, byte for byte, what the stage proved before saving.
    checked = run.checkpoints.get(stage=RunState.SYNTHESIZING).cursor["exports"]
    assert checked == {fmt: hashlib.sha256(data).hexdigest() for fmt, data in downloads.items()}

    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(downloads["zip"])
    assert bundle_problems(bundle) == []
    # Excluded wording never reaches an export, except where the very same words are a
    # verbatim quote cited for an approved claim (what the source says: docs/reports.md).
    quotes = [row.quote for row in document.appendix_b]
    for text in (c.text for c in rejected if not any(c.text in q for q in quotes)):
        for fmt in ("md", "html", "bib", "csl"):
            assert text.encode() not in downloads[fmt], (fmt, text)

    approved_text = document.claims[0].text
    forged_text = approved_text.rstrip(".") + " in every population."
    forged = forge_text(zip_text(downloads["zip"]), approved_text, forged_text)
    for signer, expected in ((None, "not signed"), (Ed25519PrivateKey.generate(), "another key")):
        path = tmp_path / f"forged-{expected}.zip"
        path.write_bytes(write_zip(remanifest(forged, sign=signer)))
        problems = bundle_problems(path)
        assert len(problems) == 1 and expected in problems[0], problems
