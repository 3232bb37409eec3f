"""A report's inputs are loaded once, as typed records; building its document from them
runs no query (issue 24)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from reports.exports.document import build_document
from reports.exports.markdown import render_markdown
from reports.inputs import load_report_inputs

pytestmark = pytest.mark.django_db


def test_it_builds_the_document_from_loaded_inputs_without_a_query(
    scene, run, author, django_assert_num_queries
):
    inputs = load_report_inputs(run)
    synthesis = inputs.synthesize(None)
    with django_assert_num_queries(0):
        document = build_document(
            inputs.document_inputs(
                synthesis, version=1, created_by="author", created_at=timezone.now()
            )
        )
        markdown = render_markdown(document)
    assert sorted(c.code for c in document.claims) == sorted(str(c.code) for c in scene["approved"])
    assert [row.code for row in document.appendix_a]  # the other claims, by code
    assert scene["approved"][0].text in markdown


def test_it_parses_the_plan_once_into_records(scene, run):
    inputs = load_report_inputs(run)
    content = run.plan_version.content
    assert inputs.plan.question == run.plan_version.plan.question
    assert [s.key for s in inputs.plan.subquestions] == [
        s["key"] for s in content.get("subquestions", [])
    ]
    assert inputs.subquestions == tuple(
        (s.key, s.text) for s in inputs.plan.subquestions if s.enabled
    )
