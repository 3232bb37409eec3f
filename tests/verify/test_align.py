"""The second offline learned family (``align``): word alignment in one quote window."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from research.pipeline.verify import VerifyConfig, default_verifiers, verify_claim
from research.pipeline.verify.align import (
    ALIGN_FEATURE_NAMES,
    ALIGN_WEIGHTS_PATH,
    AlignVerifier,
    ClaimWords,
    load_weights,
    window_features,
)
from research.pipeline.verify.learned import LearnedUnavailable, LearnedVerifier, VerifierWeights
from research.pipeline.verify.records import ClaimInput, Status, VoteVerdict
from research.pipeline.verify.rules import RulesVerifier

from .helpers import REFUTE_TEXT, SUPPORT_TEXT, item
from .test_commands import write_scifact

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")


@pytest.fixture(scope="module")
def encode():
    from research.pipeline.verify.embedcache import EmbeddingCache
    from research.providers.embedder import Embedder

    return EmbeddingCache(Embedder().encode).encode


@pytest.fixture(scope="module")
def align(encode):
    return AlignVerifier(load_weights(), encode)


@pytest.fixture(scope="module")
def offline(encode, align):
    """The offline default: rules (check) + learned + align (judging)."""
    return VerifyConfig(
        verifiers=(RulesVerifier(), LearnedVerifier(VerifierWeights.load(), encode), align)
    )


def test_it_ships_weights_with_out_of_fold_models_and_quorum_thresholds():
    weights = load_weights()
    assert weights.model.feature_names == ALIGN_FEATURE_NAMES
    assert len(weights.folds) == 5 and len(weights.claim_folds) == 809
    report = weights.meta["report"]
    assert report["joint_rule_escape_rate"] <= 0.05
    assert report["align_ece_calibrated_support"] < report["align_ece_raw_support"]
    for model in (weights.model, *weights.folds):
        assert set(model.calibration) == {"support", "contradict"}
    # The same folds as the learned family: a claim is out of fold for both at once.
    assert weights.claim_folds == VerifierWeights.load().claim_folds


def test_it_refuses_weights_over_other_features(tmp_path):
    data = json.loads(ALIGN_WEIGHTS_PATH.read_text())
    data["model"]["feature_names"] = data["model"]["feature_names"][:-1]
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(LearnedUnavailable):
        load_weights(tmp_path / "a.json")


def test_it_aligns_every_claim_word_only_when_the_window_states_them_all(encode):
    words = ClaimWords("Aspirin reduces fever in adults.", encode)
    stated = window_features(words, "In adults, aspirin lowered fever.", 0.8, encode)
    other = window_features(words, "In adults, aspirin lowered blood pressure.", 0.8, encode)
    names = list(ALIGN_FEATURE_NAMES)
    mean, weakest = names.index("align_mean"), names.index("align_min")
    assert stated[weakest] > other[weakest]  # "fever" has no partner in the other window
    assert stated[mean] > other[mean]
    assert stated[names.index("conflict")] == 0.0
    negated = window_features(words, "In adults, aspirin did not lower fever.", 0.8, encode)
    assert negated[names.index("neg_mismatch")] == 1.0 and negated[names.index("conflict")] == 1.0


def test_it_supports_a_clear_support_and_quotes_the_window_it_read(align):
    [vote] = align.judge(CLAIM, [item("e1", SUPPORT_TEXT)])
    assert vote.family == "align" and vote.verdict == VoteVerdict.SUPPORTS
    assert vote.quote and vote.quote in SUPPORT_TEXT and "fever" in vote.quote


def test_it_does_not_support_a_clear_contradiction(align):
    [vote] = align.judge(CLAIM, [item("e1", REFUTE_TEXT)])
    assert vote.verdict != VoteVerdict.SUPPORTS
    assert vote.quote in REFUTE_TEXT


def test_it_passes_only_when_learned_and_align_both_support(offline):
    assert verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], offline).status == Status.PASS
    verdict = verify_claim(CLAIM, [item("e1", REFUTE_TEXT)], offline)
    assert verdict.status != Status.PASS
    off_topic = ClaimInput("c2", "Aspirin reduces blood pressure in adults.")
    assert verify_claim(off_topic, [item("e1", SUPPORT_TEXT)], offline).status != Status.PASS


def test_it_is_an_offline_default_family_and_coverage_is_opt_in(settings, encode):
    settings.NLI_MODEL = "off"
    settings.LLM_BASE_URL = ""
    settings.VERIFIER_COVERAGE = False
    families = default_verifiers(encode)
    assert [v.family for v in families.verifiers] == ["rules", "learned", "align"]
    assert families.notes["coverage"].startswith("not configured")
    settings.VERIFIER_COVERAGE = True
    families = default_verifiers(encode)
    assert [v.family for v in families.verifiers] == ["rules", "coverage", "learned", "align"]


def test_it_trains_the_align_family_and_both_quorum_thresholds(tmp_path):
    write_scifact(tmp_path)
    common = {"scifact": tmp_path, "out": tmp_path / "learned.json", "folds": 3}
    call_command("train_verifier", **common, stdout=io.StringIO(), stderr=io.StringIO())
    runs = []
    for name in ("a.json", "b.json"):
        out = io.StringIO()
        call_command(
            "train_verifier",
            **common,
            family="align",
            align_out=tmp_path / name,
            stdout=out,
            stderr=io.StringIO(),
        )
        runs.append(out.getvalue())
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    weights = load_weights(tmp_path / "a.json")
    assert len(weights.folds) == 3 and len(weights.claim_folds) == 18
    assert "joint_rule_macro_f1" in runs[0] and "agreement (learned | align | gold" in runs[0]
    learned = VerifierWeights.load(tmp_path / "learned.json")
    assert learned.meta["quorum_thresholds"]["shipped_learned_support"] == (
        learned.model.support_threshold
    )
