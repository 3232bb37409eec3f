"""The entailment family: the shipped cross-encoder by default, another by NLI_MODEL, and
a clear error (never a silent fallback) when a configured model is missing or corrupt."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from research.pipeline.verify import VerifyConfig, default_verifiers, nli, verify_claim
from research.pipeline.verify.aggregate import AggregateConfig
from research.pipeline.verify.coverage import CoverageVerifier
from research.pipeline.verify.nli import NLIUnavailable, NLIVerifier, label_roles
from research.pipeline.verify.records import ClaimInput, Flag, Status, VoteVerdict

from .helpers import REFUTE_TEXT, SUPPORT_QUOTE, SUPPORT_TEXT, item

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


def _zeros(texts):
    return np.zeros((len(texts), 384), np.float32)


@pytest.mark.xfail(
    strict=True,
    reason="issue 22, open: the shipped model reads this plain paraphrase at entailment 0.78, "
    "below its support threshold of 0.90 (chosen out-of-fold on SciFact train for claim "
    "macro-F1 with escape <= 0.04), so it abstains",
)
def test_the_shipped_model_is_the_default_and_reads_entailment_and_contradiction(settings):
    settings.NLI_MODEL = ""
    settings.LLM_BASE_URL = ""
    families = default_verifiers(encode=_zeros)
    [verifier] = [v for v in families.verifiers if v.family == "nli"]
    assert verifier.name == "nli:shipped" and "nli" not in families.unavailable
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.")
    supporting, refuting = item("e1", SUPPORT_TEXT), item("r1", REFUTE_TEXT)
    [support, refute] = verifier.judge(claim, [supporting, refuting])
    assert support.verdict == VoteVerdict.SUPPORTS, support.rationale
    assert support.quote in supporting.text and "significantly reduced" in support.quote
    assert refute.verdict == VoteVerdict.CONTRADICTS, refute.rationale
    assert "did not reduce" in refute.quote
    off_topic = ClaimInput("c2", "Aspirin reduces blood pressure in adults.")
    [vote] = verifier.judge(off_topic, [supporting])
    assert vote.verdict != VoteVerdict.SUPPORTS, vote.rationale


def test_it_reads_sentences_and_adjacent_pairs_verbatim_and_scores_each_pair_once():
    verifier = NLIVerifier()
    passage = item("e1", SUPPORT_TEXT)
    spans = nli.windows(passage)
    texts = [passage.text[a:b] for a, b in spans]
    assert SUPPORT_QUOTE in texts  # one sentence
    assert any(SUPPORT_QUOTE in t and "Adverse events" in t for t in texts)  # two adjacent
    assert "Trial summary." not in texts  # too short to quote on its own
    claim = ClaimInput("c1", "Aspirin reduces fever in adults.")
    verifier.judge(claim, [passage])
    scored = verifier.scored
    verifier.judge(claim, [passage, item("e2", SUPPORT_TEXT)])  # same windows, same claim
    assert verifier.scored == scored == len(spans)


def test_it_can_be_switched_off_and_says_so(settings):
    settings.NLI_MODEL = "off"
    settings.LLM_BASE_URL = ""
    with pytest.raises(NLIUnavailable, match="not configured"):
        NLIVerifier.from_settings()
    families = default_verifiers(encode=_zeros)
    assert "not configured" in families.notes["nli"]
    assert "not configured" in families.notes["llm"]


def _copy_of_shipped(tmp_path):
    target = tmp_path / "model"
    shutil.copytree(nli.SHIPPED, target)
    return target


def test_a_missing_shipped_model_is_an_error_naming_the_file_and_blocks_pass(
    tmp_path, settings, monkeypatch
):
    monkeypatch.setattr(nli, "SHIPPED", tmp_path / "weights" / "nli")
    settings.NLI_MODEL = ""
    families = default_verifiers(encode=_zeros)
    assert str(tmp_path / "weights" / "nli" / "nli.json") in families.unavailable["nli"]
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


def test_a_corrupt_or_incomplete_model_is_refused_naming_the_file(tmp_path, settings):
    corrupt = _copy_of_shipped(tmp_path)
    graph = corrupt / "model.onnx"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    with pytest.raises(NLIUnavailable, match=f"{graph} is corrupt"):
        nli.OnnxScorer(corrupt)
    incomplete = tmp_path / "incomplete"
    shutil.copytree(nli.SHIPPED, incomplete)
    (incomplete / "tokenizer.json").unlink()
    with pytest.raises(NLIUnavailable, match="tokenizer.json is missing"):
        nli.OnnxScorer(incomplete)
    (corrupt / "nli.json").write_text("{not json")
    with pytest.raises(NLIUnavailable, match="not an NLI manifest"):
        nli.OnnxScorer(corrupt)
    settings.NLI_MODEL = str(tmp_path / "missing-model")
    families = default_verifiers(encode=_zeros)
    assert "could not be loaded" in families.unavailable["nli"]


def test_out_of_fold_scoring_without_the_fold_models_says_how_to_make_them(tmp_path, settings):
    settings.NLI_MODEL = ""
    settings.NLI_FOLDS_DIR = tmp_path
    families = default_verifiers(encode=_zeros, out_of_fold=True)
    assert "train_nli --stage folds" in families.unavailable["nli"]


def test_the_shipped_manifest_matches_its_files_and_model_card():
    manifest = json.loads((nli.SHIPPED / "nli.json").read_text())
    assert manifest["labels"] == ["contradiction", "entailment", "neutral"]
    card = (nli.SHIPPED / "MODEL_CARD.md").read_text()
    for needed in ("train_nli", "CC BY-SA", "MIT", "out-of-fold", "sha256"):
        assert needed in card
    assert (nli.SHIPPED / "model.onnx").stat().st_size < 40 * 1024 * 1024
