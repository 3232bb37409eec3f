"""The semantic check of a report's sentences (research/pipeline/report_check.py), with
the entailment model this repository ships, read as the synthesis reads it."""

from __future__ import annotations

import pytest

from research.pipeline.report_check import (
    ENTAILED,
    IDENTICAL,
    REFUSED,
    Hypothesis,
    Premise,
    check_sentences,
    from_settings,
)
from research.pipeline.synthesize import synthesize
from research.pipeline.verify.nli import NLIUnavailable, load_scorer
from research.pipeline.verify.records import Vote, VoteVerdict
from research.providers.base import ProviderError
from tests.reports.test_synthesize import FakeLLM, capsule

BAR = 0.85
MIXED = capsule("m", "The policy raised tax revenue but lowered employment.", source="url:m")
ASPIRIN = capsule("a", "Aspirin reduces heart attack risk in adults.", confidence=0.9)


@pytest.fixture(scope="module")
def scorer():
    return load_scorer("")


@pytest.fixture
def check(scorer):
    return lambda hypotheses: check_sentences(hypotheses, scorer, BAR)


def test_the_writer_adds_an_unsupported_sentence_and_the_build_refuses_it_by_name(check):
    """Every word of "The policy lowered tax revenue" is in the claim it cites, so the
    lexical check lets it through; it says the opposite, and the entailment model refuses
    it. The supported paraphrase beside it passes and is kept as the writer wrote it."""
    writer = FakeLLM(
        "In adults, aspirin reduces heart attack risk [C1]. The policy lowered tax revenue [C2]."
    )
    result = synthesize([ASPIRIN, MIXED], llm=writer, check=check)
    sentences = [s.text for section in result.sections for s in section.sentences]
    assert "In adults, aspirin reduces heart attack risk." in sentences
    assert "The policy lowered tax revenue." not in sentences
    refused = [f for f in result.findings if f.action == "refused"]
    assert [f.sentence for f in refused] == ["The policy lowered tax revenue."]
    assert refused[0].reason.startswith("no cited claim entails proposition 1 of 1 (entailment")
    # the claim the refused sentence stood for is stated as approved instead, and judged
    assert MIXED.text in sentences
    assert result.check is not None
    outcomes = {s.text: s.outcome for s in result.check.sentences}
    assert outcomes == {
        "In adults, aspirin reduces heart attack risk.": ENTAILED,
        "The policy lowered tax revenue.": REFUSED,
        MIXED.text: IDENTICAL,
    }
    assert "3 judged; 1 entailed, 1 the approved text itself, 1 refused" in result.check.summary()


def test_an_extractive_report_is_judged_sentence_by_sentence_and_loses_nothing(check):
    result = synthesize([ASPIRIN, MIXED], check=check)
    assert result.check is not None
    assert [s.outcome for s in result.check.sentences] == [IDENTICAL, IDENTICAL]
    assert all(0.0 <= s.entailment <= 1.0 for s in result.check.sentences)
    assert not any(f.action == "refused" for f in result.findings)


def test_a_sentence_may_join_two_cited_claims_but_not_bridge_them(scorer):
    exercise = Premise("b", "Exercise may lower blood pressure in older adults.")
    aspirin = Premise("a", ASPIRIN.text)
    both = (aspirin, exercise)
    joined = Hypothesis(
        "s",
        "Aspirin reduces heart attack risk in adults, and exercise may lower blood pressure "
        "in older adults.",
        both,
    )
    bridge = Hypothesis("s", "Aspirin may lower blood pressure in older adults.", both)
    result = check_sentences([joined, bridge], scorer, BAR)
    assert [s.outcome for s in result.sentences] == [ENTAILED, REFUSED]
    assert "proposition 1 of 1" in result.sentences[1].reason


class Judge:
    family = "llm-test"

    def __init__(self, verdict):
        self.verdict = verdict
        self.calls = 0

    def judge(self, claim, items):
        self.calls += 1
        if isinstance(self.verdict, Exception):
            raise self.verdict
        return [Vote.bind("j", self.family, claim, items[0], verdict=self.verdict, score=0.9)]


@pytest.mark.parametrize(
    ("verdict", "outcome"),
    [
        (VoteVerdict.SUPPORTS, ENTAILED),
        (VoteVerdict.INSUFFICIENT, REFUSED),
        (ProviderError("judge down", permanent=False), REFUSED),
    ],
)
def test_every_llm_judge_must_support_what_the_model_entails(scorer, verdict, outcome):
    judge = Judge(verdict)
    premise = (Premise("a", ASPIRIN.text),)
    sentence = Hypothesis("s", "In adults, aspirin reduces heart attack risk.", premise)
    identical = Hypothesis("s", ASPIRIN.text, premise)
    result = check_sentences([sentence, identical], scorer, BAR, [judge])
    assert [s.outcome for s in result.sentences] == [outcome, IDENTICAL]
    assert judge.calls == 1  # the approved text itself needs no judge
    assert result.judges == ("llm-test",)
    if outcome == REFUSED:
        assert "not supported by llm-test" in result.sentences[0].reason


def test_off_says_the_check_did_not_run(settings):
    settings.REPORT_CHECK_MODEL = "off"
    result = synthesize([ASPIRIN], check=from_settings()).check
    assert result is not None and result.sentences == ()
    assert result.summary() == (
        "Semantic check of the report's sentences: not run (REPORT_CHECK_MODEL=off)."
    )


def test_a_corrupt_model_is_an_error_naming_the_file(settings, tmp_path):
    manifest = '{"labels": ["contradiction", "entailment", "neutral"], "max_length": 128}'
    (tmp_path / "nli.json").write_text(manifest)
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "model.onnx").write_bytes(b"not a graph")
    settings.REPORT_CHECK_MODEL = str(tmp_path)
    with pytest.raises(NLIUnavailable, match=str(tmp_path / "model.onnx")):
        from_settings()
