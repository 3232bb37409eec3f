from __future__ import annotations

import numpy as np
import pytest
import torch

from research.pipeline.verify import VerifyConfig, default_verifiers, verify_claim
from research.pipeline.verify.aggregate import AggregateConfig
from research.pipeline.verify.coverage import CoverageVerifier
from research.pipeline.verify.nli import NLIUnavailable, NLIVerifier, label_roles
from research.pipeline.verify.records import ClaimInput, Flag, Status, VoteVerdict

from .helpers import REFUTE_TEXT, SUPPORT_TEXT, item

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "aspirin",
    "reduces",
    "reduced",
    "fever",
    "in",
    "adults",
    "trial",
    "a",
    "of",
    "the",
]


def tiny_cross_encoder(path, labels=("entailment", "neutral", "contradiction"), favour=2):
    """A 2-layer BERT classifier with random weights, biased towards one label, saved locally."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    torch.manual_seed(0)
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    config = BertConfig(  # type: ignore[call-arg]
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        model.classifier.bias[favour] = 8.0
    model.save_pretrained(path)
    BertTokenizer(str(path / "vocab.txt")).save_pretrained(path)
    return str(path)


def test_it_loads_a_local_cross_encoder_by_path_and_votes_with_a_verbatim_quote(tmp_path):
    verifier = NLIVerifier(tiny_cross_encoder(tmp_path))
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.")
    ev = item("e1", SUPPORT_TEXT)
    [vote] = verifier.judge(claim, [ev])
    assert vote.family == "nli"
    assert vote.verdict == VoteVerdict.CONTRADICTS
    assert vote.quote in ev.text
    verdict = verify_claim(claim, [ev], VerifyConfig(verifiers=(verifier,)))
    # It says "contradicts" on a sentence that states the claim: no explicit conflict, so
    # only a possible contradiction, never FAIL.
    assert verdict.status == Status.UNCERTAIN
    assert Flag.POSSIBLE_CONTRADICTION in verdict.flags
    assert verdict.votes and not verdict.discarded
    refute = item("r1", REFUTE_TEXT, source_key="doi:9")
    assert verify_claim(claim, [refute], VerifyConfig(verifiers=(verifier,))).status == Status.FAIL


def test_it_passes_only_when_the_nli_model_entails_and_another_family_agrees(tmp_path):
    verifier = NLIVerifier(tiny_cross_encoder(tmp_path, favour=0))
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.")
    evidence = [item("e1", SUPPORT_TEXT)]
    alone = verify_claim(claim, evidence, VerifyConfig(verifiers=(verifier,)))
    assert alone.status == Status.UNCERTAIN  # one family cannot form the quorum
    both = VerifyConfig(verifiers=(verifier, CoverageVerifier()))
    assert verify_claim(claim, evidence, both).status == Status.PASS


def test_it_refuses_a_model_whose_labels_it_cannot_map(tmp_path):
    path = tiny_cross_encoder(tmp_path, labels=("LABEL_0", "LABEL_1", "LABEL_2"))
    with pytest.raises(NLIUnavailable, match="cannot map"):
        NLIVerifier(path)
    assert label_roles({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}) == {
        "contradict": 0,
        "neutral": 1,
        "entail": 2,
    }


def test_it_says_so_when_no_nli_model_is_configured(settings):
    settings.NLI_MODEL = ""
    settings.LLM_BASE_URL = ""
    with pytest.raises(NLIUnavailable, match="not configured"):
        NLIVerifier.from_settings()
    families = default_verifiers(encode=lambda texts: np.zeros((len(texts), 384), np.float32))
    assert "not configured" in families.notes["nli"]
    assert "not configured" in families.notes["llm"]


def test_it_marks_a_configured_model_that_cannot_be_loaded_unavailable(tmp_path, settings):
    with pytest.raises(NLIUnavailable, match="could not be loaded"):
        NLIVerifier(str(tmp_path / "missing-model"))
    settings.NLI_MODEL = str(tmp_path / "missing-model")
    families = default_verifiers(encode=lambda texts: np.zeros((len(texts), 384), np.float32))
    assert "could not be loaded" in families.unavailable["nli"]
    config = VerifyConfig(
        verifiers=(CoverageVerifier(),),
        unavailable=families.unavailable,
        aggregate=AggregateConfig(quorum=1),
    )
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.")
    verdict = verify_claim(claim, [item("e1", SUPPORT_TEXT)], config)
    assert verdict.status == Status.UNCERTAIN  # never silently treated as verified
    assert "not corroborated by nli" in verdict.rationale
    assert config.family_states()["nli"].startswith("unavailable")
