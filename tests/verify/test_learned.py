from __future__ import annotations

import json

import pytest

from research.pipeline.verify import VerifyConfig, default_verifiers, verify_claim
from research.pipeline.verify.features import FEATURE_NAMES
from research.pipeline.verify.learned import (
    WEIGHTS_PATH,
    LearnedUnavailable,
    LearnedVerifier,
    VerifierWeights,
)
from research.pipeline.verify.records import ClaimInput, PoolName, Status, VoteVerdict

from .helpers import REFUTE_TEXT, SUPPORT_TEXT, item

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")
UNRELATED = (
    "Why the sky is blue. Rayleigh scattering of sunlight by molecules in the atmosphere "
    "makes the sky appear blue. Shorter wavelengths are scattered more strongly."
)


@pytest.fixture(scope="module")
def learned():
    from research.providers.embedder import Embedder

    return LearnedVerifier(VerifierWeights.load(), Embedder().encode)


@pytest.fixture(scope="module")
def config(learned):
    from research.pipeline.verify.coverage import CoverageVerifier
    from research.pipeline.verify.rules import RulesVerifier

    return VerifyConfig(verifiers=(RulesVerifier(), CoverageVerifier(), learned))


def test_it_ships_weights_under_twenty_megabytes_with_out_of_fold_models():
    assert WEIGHTS_PATH.stat().st_size < 20 * 1024 * 1024
    weights = VerifierWeights.load()
    assert weights.model.feature_names == FEATURE_NAMES
    assert len(weights.folds) == 5
    assert len(weights.claim_folds) == 809
    assert weights.meta["report"]["cv_escape_rate"] <= 0.05
    model, held_out = weights.for_claim(next(iter(weights.claim_folds)))
    assert held_out and any(model is fold for fold in weights.folds)


def test_it_refuses_weights_trained_on_other_features(tmp_path):
    data = json.loads(WEIGHTS_PATH.read_text())
    data["model"]["feature_names"] = ["something_else"]
    (tmp_path / "w.json").write_text(json.dumps(data))
    with pytest.raises(LearnedUnavailable):
        VerifierWeights.load(tmp_path / "w.json")


def test_it_supports_a_clear_support_example(learned, config):
    [vote] = learned.judge(CLAIM, [item("e1", SUPPORT_TEXT)])
    assert vote.verdict == VoteVerdict.SUPPORTS
    assert vote.quote in SUPPORT_TEXT
    assert verify_claim(CLAIM, [item("e1", SUPPORT_TEXT)], config).status == Status.PASS


def test_it_contradicts_a_clear_contradiction_example(learned, config):
    [vote] = learned.judge(CLAIM, [item("e1", REFUTE_TEXT)])
    assert vote.verdict == VoteVerdict.CONTRADICTS
    assert verify_claim(CLAIM, [item("e1", REFUTE_TEXT)], config).status == Status.FAIL


def test_it_turns_a_pass_into_a_fail_when_a_contradiction_is_injected(config):
    supports = [item(f"s{i}", SUPPORT_TEXT, source_key=f"doi:{i}") for i in range(3)]
    assert verify_claim(CLAIM, supports, config).status == Status.PASS
    injected = item("r1", REFUTE_TEXT, PoolName.REFUTE, source_key="doi:9")
    verdict = verify_claim(CLAIM, [*supports, injected], config)
    assert verdict.status in (Status.FAIL, Status.UNCERTAIN)
    assert verdict.refute_ids == ["r1"]


def test_it_never_passes_true_facts_the_evidence_does_not_state(config):
    for fact in (
        "Paris is the capital of France.",
        "Rayleigh scattering is named after Lord Rayleigh.",
    ):
        verdict = verify_claim(ClaimInput("n1", fact), [item("e1", UNRELATED)], config)
        assert verdict.status != Status.PASS, fact


def test_it_cannot_pass_a_claim_whose_cited_passage_lacks_its_quote(config):
    cited = item("e1", UNRELATED, cited_quote="Aspirin reduces fever in adults within hours.")
    verdict = verify_claim(CLAIM, [cited], config)
    assert verdict.status == Status.UNVERIFIABLE  # nothing admitted, nothing judged
    assert verdict.discard_counts() == {"cited quote not found in the passage": 1}


def test_it_builds_the_default_families_from_settings(settings, learned):
    settings.NLI_MODEL = "off"
    settings.LLM_BASE_URL = ""
    settings.VERIFIER_COVERAGE = False
    families = default_verifiers(learned.encode)
    assert [v.family for v in families.verifiers] == ["rules", "learned", "align"]
    assert set(families.notes) == {"nli", "llm", "coverage"}
    assert families.unavailable == {}


def test_it_scores_votes_with_probabilities_calibrated_inside_the_cross_validation(learned):
    weights = VerifierWeights.load()
    for model in (weights.model, *weights.folds):
        assert set(model.calibration) == {"support", "contradict"}
    report = weights.meta["calibration"]
    assert report["ece_calibrated_contradict"] < report["ece_raw_contradict"]
    [vote] = learned.judge(CLAIM, [item("e1", REFUTE_TEXT)])
    raw = float(vote.rationale.split("P(contradict)=")[1].split(",")[0])
    assert vote.verdict == VoteVerdict.CONTRADICTS
    assert vote.score == pytest.approx(weights.model.calibrated("contradict", raw), abs=0.01)
    assert "calibrated P(support)=" in vote.rationale
