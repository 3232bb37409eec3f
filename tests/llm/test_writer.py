"""The LLM report writer against a real llama.cpp server: plumbing only, never prose quality."""

from __future__ import annotations

import pytest

from research.pipeline.synthesize import Capsule, CapsuleEvidence, synthesize

pytestmark = pytest.mark.slow

TEXT = "Aspirin reduced fever in adults."
CAPSULE = Capsule(
    code="k1",
    text=TEXT,
    fingerprint="k1" * 4,
    subquestion_key="s1",
    subquestion_text="Does aspirin reduce fever?",
    evidence=(CapsuleEvidence("url:a", TEXT, 0, len(TEXT), "0" * 64, "1" * 64),),
)


def test_it_writes_within_the_bound_and_never_loses_the_approved_claim(smol):
    client = smol(48)
    synthesis = synthesize([CAPSULE], llm=client)
    sent = client.last
    assert sent is not None and sent.response_format == "none"  # prose, not JSON
    assert sent.completion_tokens is not None and sent.completion_tokens <= 48
    [section] = synthesis.sections
    assert section.mode in ("llm", "llm-fallback")
    assert any("k1" in sentence.claims for sentence in section.sentences)
    errors = [f.reason for f in synthesis.findings if f.action == "llm-error"]
    if sent.finish_reason == "length":  # a cut-off reply: the section is the extractive one
        assert len(errors) == 1 and "reply cut off at max_tokens=48" in errors[0]
        assert section.mode == "llm-fallback"
    else:
        assert errors == []


def test_its_prose_goes_through_the_semantic_check_sentence_by_sentence(smol):
    """Whatever the small model writes, every sentence the report keeps was judged and
    passed, and every sentence the check refused is named in the findings."""
    from research.pipeline.report_check import check_sentences
    from research.pipeline.verify.nli import load_scorer

    scorer = load_scorer("")
    synthesis = synthesize(
        [CAPSULE], llm=smol(96), check=lambda h: check_sentences(h, scorer, 0.85)
    )
    assert synthesis.check is not None
    judged = {s.text: s for s in synthesis.check.sentences}
    kept = [s.text for section in synthesis.sections for s in section.sentences]
    assert kept and all(judged[text].passed for text in kept)
    refused = {f.sentence for f in synthesis.findings if f.action == "refused"}
    assert refused == {s.text for s in synthesis.check.refused}
