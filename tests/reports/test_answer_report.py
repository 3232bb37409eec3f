"""Acceptance (issue 15, point 3) on a real run: the bottom line, consensus, evidence
table, counter-evidence and gaps come from approved capsules only, and every number the
bottom line prints traces to the approved claims and sources it counts.

The library is ingested through the real ingest service, the run goes through every stage
with the offline defaults, the reviewer approves some claims, rejects one and leaves the
rest unreviewed (the gate refuses a report then), rejects those too; the report is built
as the synthesizing stage builds it.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from pypdf import PdfReader

from ledger.models import Claim, ReviewState
from reports.build import ReportRefused, do_build_report, load_report_inputs, prepare_report
from reports.export import render_checked
from reports.exports.answer import untraceable_numbers
from reports.exports.records import ReportDocument
from reports.integrity import report_document
from research import runner, services
from research.pipeline.records import parse_plan
from research.providers.llm import LLMClient
from review.services.decisions import (
    approval_refusal,
    do_approve_claim,
    do_reject_claim,
    is_override,
)
from review.services.gate import gate_policy
from tests.reports.library import ingest_long_library, vitamin_d_plan

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def plan_with_a_disabled_subquestion() -> dict[str, Any]:
    plan = vitamin_d_plan()
    plan["subquestions"].append(
        {
            "key": "s3",
            "text": "Does vitamin D supplementation reduce mortality in older adults?",
            "dimension": "evidence",
            "priority": 1,
            "budget": 2,
            "enabled": False,
            "queries": [
                {
                    "key": "s3q1",
                    "text": "vitamin D supplementation mortality",
                    "query_class": "benchmark",
                    "source_classes": ["library"],
                }
            ],
        }
    )
    return plan


def review_some(run, reviewer) -> tuple[list[Claim], list[Claim], list[Claim]]:
    """Approve what may be approved except one, which is rejected; the last third of the
    claims stays unreviewed."""
    claims = list(Claim.objects.filter(run=run).order_by("pk"))
    policy = gate_policy(run.plan_version.plan)
    approved: list[Claim] = []
    rejected: list[Claim] = []
    unreviewed = claims[len(claims) * 2 // 3 :]
    for claim in claims[: len(claims) * 2 // 3]:
        if approval_refusal(claim, reviewer, policy) or not rejected:
            do_reject_claim(reviewer, claim, claim.version, "unsupported", "e2e test")
            rejected.append(claim)
        else:
            note = "e2e test: the reviewer read the source" if is_override(claim) else ""
            do_approve_claim(reviewer, claim, claim.version, note)
            approved.append(claim)
    return approved, rejected, unreviewed


def answer_texts(doc: ReportDocument) -> list[str]:
    lines = [doc.answer.question] if doc.answer.question else []
    return [s.text for line in [*lines, *doc.answer.subquestions] for s in line.sentences]


def test_it_answers_from_approved_capsules_only_with_every_number_traced(author, reviewer):
    plan = services.do_create_plan(
        author, parse_plan(plan_with_a_disabled_subquestion()), library=ingest_long_library()
    )
    plan.members.add(reviewer, through_defaults={"role": "reviewer"})
    run = runner.run_to_end(services.check_start_run(author, plan, 1).code)
    approved, rejected, unreviewed = review_some(run, reviewer)
    assert approved and rejected and unreviewed

    # No report while a claim is unreviewed; then the reviewer rejects the rest.
    with pytest.raises(ReportRefused, match="gate is closed"):
        do_build_report(run, author)
    for claim in unreviewed:
        do_reject_claim(reviewer, claim, claim.version, "out-of-scope", "e2e: not read")
    report = do_build_report(run, author)
    doc = report_document(report)
    reported = {c.label for c in doc.claims}
    assert {c.code for c in doc.claims} <= {str(c.code) for c in approved}
    bottom = doc.answer.question
    assert bottom is not None and bottom.consensus in {
        "supports",
        "mixed",
        "against",
        "insufficient",
    }

    # Every number traces: counts list exactly what they count, among reported claims and
    # cited sources; any other number is stated by a claim the sentence cites.
    assert untraceable_numbers(doc) == []
    cited = {row.source for row in doc.appendix_b}
    lines = [bottom, *doc.answer.subquestions]
    for sentence in (s for line in lines for s in line.sentences):
        assert set(sentence.claims) <= reported, sentence.text
        stated = {
            n for c in doc.claims if c.label in sentence.claims for n in NUMBER.findall(c.text)
        }
        for number in NUMBER.findall(sentence.text):
            assert number in {str(n.value) for n in sentence.counts} | stated, sentence.text
        for count in sentence.counts:
            assert set(count.claims) <= reported and set(count.sources) <= cited, count
            backing = count.sources if count.unit == "sources" else count.claims
            assert count.value == len(set(backing)), count
    # A tampered number is caught, and the build refuses a bottom line that does not trace.
    data = doc.to_json()
    first = data["answer"]["question"]["sentences"][0]
    first["text"] = NUMBER.sub("97", first["text"], count=1)
    tampered = ReportDocument.from_json(data)
    assert untraceable_numbers(tampered)
    inputs = load_report_inputs(run)
    synthesis = inputs.synthesize(LLMClient.from_settings())
    assert synthesis.answer is not None
    lead = synthesis.answer.question.sentences[0]
    lead.text = NUMBER.sub("97", lead.text, count=1)
    with pytest.raises(ReportRefused, match="not traceable"):
        prepare_report(run, author, synthesis, inputs)

    # The evidence table lists every cited source, each with its design and year cells.
    assert [row.number for row in doc.evidence_table] == sorted(cited)
    for row in doc.evidence_table:
        assert set(row.claims) <= reported and row.claims, row
    # The disabled subquestion is a gap that says it was not searched.
    gaps = {gap.key: gap for gap in doc.gaps}
    assert "s3" in gaps and "not searched" in gaps["s3"].state and gaps["s3"].searched == []
    # Counter-evidence: the standing overrides are exactly the reported overridden claims.
    overridden = {c.label for c in doc.claims if c.override}
    assert {o.claim for o in doc.counter.overrides} == overridden

    # Nothing of a rejected or unreviewed claim reaches the answer sections or any export.
    withheld = [
        c.text for c in Claim.objects.filter(run=run).exclude(review_state=ReviewState.APPROVED)
    ]
    assert len(withheld) >= len(rejected) + len(unreviewed)
    quotes = [row.quote for row in doc.appendix_b]
    answers = " ".join(answer_texts(doc))
    table = " ".join(
        f"{r.population} {r.intervention} {r.outcome} {r.effect}" for r in doc.evidence_table
    )
    exports = {fmt: render_checked(report, fmt).data for fmt in ("md", "html", "pdf")}
    for text in withheld:
        if any(text in quote for quote in quotes):
            continue  # the very words of a quote an approved claim cites (docs/reports.md)
        assert text not in answers and text not in table, text
        assert text.encode() not in exports["md"] and text.encode() not in exports["html"]

    # Markdown, HTML and PDF open with the bottom line and its consensus indicator.
    md = exports["md"].decode()
    first_section = md.split("\n## ", 2)[1]
    assert first_section.startswith("Bottom line") and "**Consensus:" in first_section
    html = exports["html"].decode()
    assert html.index('id="bottom-line"') < html.index('id="evidence-table"')
    assert 'id="consensus"' in html and 'id="counter-evidence"' in html and 'id="gaps"' in html
    pages = PdfReader(io.BytesIO(exports["pdf"])).pages
    # Readable in about ten pages plus scannable appendices: at most 15 for <= 15 claims.
    assert len(doc.claims) <= 15 and len(pages) <= 15, (len(doc.claims), len(pages))
    opening = pages[0].extract_text()
    assert "Bottom line" in opening and "Consensus" in opening
    text = " ".join(page.extract_text() for page in pages)
    for title in ("Evidence table", "Counter-evidence and disagreement", "Gaps"):
        assert title in text, title
