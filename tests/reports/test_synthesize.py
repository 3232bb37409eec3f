from __future__ import annotations

import pytest

from research.pipeline.synthesize import (
    Capsule,
    CapsuleEvidence,
    NoCapsulesError,
    atomize,
    check_sentence,
    outline,
    synthesize,
)
from research.providers.base import ProviderError


def capsule(code, text, *, sub="sq1", pos=0, source="url:a", confidence=0.5, **fields):
    evidence = CapsuleEvidence(
        source_key=source,
        quote=text,
        quote_start=0,
        quote_end=len(text),
        snapshot_sha256="0" * 64,
        passage_fingerprint="1" * 64,
    )
    return Capsule(
        code=code,
        text=text,
        fingerprint=code * 4,
        subquestion_key=sub,
        subquestion_text=f"Question {sub}",
        subquestion_position=pos,
        confidence=confidence,
        evidence=(evidence,),
        **fields,
    )


class FakeLLM:
    label = "llm:fake"

    def __init__(self, reply):
        self.reply = reply
        self.calls = []

    def chat(self, messages, *, json_mode=False):
        self.calls.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


CAPSULES = [
    capsule("b", "Exercise may lower blood pressure in older adults.", source="url:b"),
    capsule("a", "Aspirin reduces heart attack risk in adults.", confidence=0.9),
    capsule("c", "Sleep loss impairs memory.", sub="sq2", pos=1, source="url:b"),
]


def test_it_outlines_by_subquestion_in_plan_order_then_confidence():
    sections = outline(reversed(CAPSULES))
    assert [s.key for s in sections] == ["sq1", "sq2"]
    assert sections[0].claims == ["a", "b"]


def test_it_writes_extractive_prose_with_citations_numbered_by_first_use():
    result = synthesize(CAPSULES)
    assert result.synthesizer == "extractive"
    assert result.labels == {"a": "C1", "b": "C2", "c": "C3"}
    assert result.sources == ["url:a", "url:b"]
    first = result.sections[0].sentences
    assert [s.text for s in first] == [CAPSULES[1].text, CAPSULES[0].text]
    assert [s.citations for s in first] == [[1], [2]]
    assert result.sections[1].sentences[0].citations == [2]
    assert result.findings == []


def test_it_qualifies_a_sentence_with_its_allowed_scope():
    scoped = capsule("s", "Drug X lowers LDL.", allowed_scope="in adults with diabetes")
    sentence = synthesize([scoped]).sections[0].sentences[0]
    assert sentence.text == "Drug X lowers LDL (scope: in adults with diabetes)."


def test_it_refuses_to_synthesize_without_capsules_that_have_evidence():
    bare = Capsule(code="x", text="No evidence.", fingerprint="x")
    with pytest.raises(NoCapsulesError):
        synthesize([bare])


def test_it_reatomizes_prose_into_sentences_with_their_tags():
    units = atomize("Aspirin helps [C1]. Exercise may help, e.g. walking [C2, C3].\n\nOdd. [C4]")
    assert units == [
        ("Aspirin helps.", ["C1"]),
        ("Exercise may help, e.g. walking.", ["C2", "C3"]),
        ("Odd.", ["C4"]),
    ]


@pytest.mark.parametrize(
    ("sentence", "tags", "problem"),
    [
        ("Aspirin reduces heart attack risk in adults.", [], "cites no approved claim"),
        ("Aspirin reduces heart attack risk in adults.", ["C9"], "not approved"),
        ("Aspirin always reduces heart attack risk in adults.", ["C1"], "broadened scope"),
        ("Aspirin reduces heart attack risk in all adults.", ["C1"], "broadened scope"),
        ("Aspirin reduces heart attack risk in 40% of adults.", ["C1"], "numbers"),
        ("Aspirin does not reduce heart attack risk in adults.", ["C1"], "unsupported content"),
        ("Aspirin reduces stroke risk in adults.", ["C1"], "unsupported content (stroke)"),
        ("Exercise lowers blood pressure in older adults.", ["C2"], "drops the hedge"),
        (
            "Aspirin reduces heart attack risk in adults because exercise may lower blood "
            "pressure in older adults.",
            ["C1", "C2"],
            "bridge claim",
        ),
    ],
)
def test_it_flags_sentences_that_do_not_map_to_their_claims(sentence, tags, problem):
    by_label = {"C1": CAPSULES[1], "C2": CAPSULES[0]}
    problems = check_sentence(sentence, tags, by_label)
    assert any(problem in p for p in problems), problems


def test_it_accepts_a_faithful_combination_of_two_claims():
    by_label = {"C1": CAPSULES[1], "C2": CAPSULES[0]}
    sentence = (
        "Aspirin reduces heart attack risk in adults, and exercise may lower blood "
        "pressure in older adults."
    )
    assert check_sentence(sentence, ["C1", "C2"], by_label) == []


def test_it_flags_a_bridge_that_fuses_two_claims_into_one_proposition():
    by_label = {"C1": CAPSULES[1], "C2": CAPSULES[0]}
    sentence = "Aspirin may lower blood pressure in older adults."
    problems = check_sentence(sentence, ["C1", "C2"], by_label)
    assert any(p.startswith("bridge claim") for p in problems), problems
    assert check_sentence(sentence, ["C1"], by_label)  # and no single claim says it


def test_it_flags_a_prohibited_overstatement():
    strict = capsule("p", "Drug X lowers LDL.", prohibited_overstatements=("lowers LDL",))
    assert check_sentence("Drug X lowers LDL.", ["C1"], {"C1": strict})


def test_it_removes_an_unsupported_llm_sentence_and_records_it():
    reply = (
        "Aspirin reduces heart attack risk in adults [C1]. "
        "Exercise may lower blood pressure in older adults [C2]. "
        "Therefore everyone should take aspirin daily [C1]."
    )
    llm = FakeLLM(reply)
    result = synthesize(CAPSULES[:2], llm=llm)
    section = result.sections[0]
    assert result.synthesizer == "llm:fake"
    assert section.mode == "llm"
    assert [s.text for s in section.sentences] == [
        "Aspirin reduces heart attack risk in adults.",
        "Exercise may lower blood pressure in older adults.",
    ]
    assert [(f.action, f.sentence) for f in result.findings] == [
        ("removed", "Therefore everyone should take aspirin daily.")
    ]
    assert "C1" in llm.calls[0][1]["content"]


def test_it_falls_back_to_extractive_when_most_llm_sentences_fail():
    llm = FakeLLM("Aspirin cures everything [C1]. Exercise is magic [C2].")
    result = synthesize(CAPSULES[:2], llm=llm)
    assert result.sections[0].mode == "llm-fallback"
    assert [s.claims for s in result.sections[0].sentences] == [["a"], ["b"]]
    assert [f.action for f in result.findings] == ["removed", "removed", "section-fallback"]


def test_it_appends_claims_the_llm_left_out():
    result = synthesize(
        CAPSULES[:2], llm=FakeLLM("Aspirin reduces heart attack risk in adults [C1].")
    )
    assert [s.claims for s in result.sections[0].sentences] == [["a"], ["b"]]
    assert [f.action for f in result.findings] == ["appended-extractive"]


def test_it_falls_back_when_the_llm_fails():
    result = synthesize(CAPSULES[:1], llm=FakeLLM(ProviderError("down", permanent=False)))
    assert result.sections[0].mode == "llm-fallback"
    assert result.findings[0].action == "llm-error"
