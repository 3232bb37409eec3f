"""Reranking: a tiny cross-encoder built here loads by path and scores; a missing one is
recorded as "reranker: none" and the fused order stands."""

from __future__ import annotations

import pytest

from research.pipeline.retrieve.records import Hit, RetrievalRequest
from research.pipeline.retrieve.rerank import rerank
from research.providers.reranker import Reranker, load_reranker
from research.retrieval import RetrievalConfig, Retriever

WORDS = ("the a of is gene tp53 mutation cancer protein cell tea green caffeine cats sleep").split()  # noqa: SIM905


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A 1-layer BERT with random weights and a 20-word vocabulary, saved to disk."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=5 + len(WORDS),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,  # type: ignore[call-arg]  # a PretrainedConfig kwarg
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizer(str(vocab)).save_pretrained(folder)
    return str(folder)


class ByLength:
    """A deterministic scorer: longer passages score higher."""

    label = "by-length"

    def score(self, query, texts):
        return [float(len(t)) for t in texts]


def hits():
    return [
        Hit(passage_id=1, score=0.3, ranks={"bm25": 1}, text="short"),
        Hit(passage_id=2, score=0.2, ranks={"bm25": 2}, text="a much longer passage"),
        Hit(passage_id=3, score=0.1, ranks={"bm25": 3}, text="medium text"),
    ]


def test_it_loads_a_local_cross_encoder_by_path_and_scores(tiny_cross_encoder):
    reranker, reason = load_reranker(tiny_cross_encoder, max_length=64)
    assert reason == ""
    assert isinstance(reranker, Reranker)
    scores = reranker.score("tp53 mutation", ["the tp53 gene mutation", "green tea caffeine"])
    assert len(scores) == 2 and all(isinstance(s, float) for s in scores)
    assert scores[0] != scores[1]  # random weights, but the inputs differ
    assert reranker.label.startswith("cross-encoder:")


def test_it_reorders_the_head_and_keeps_ranks(tiny_cross_encoder):
    reranker, _ = load_reranker(tiny_cross_encoder, max_length=64)
    assert reranker is not None
    out, notes = rerank("tp53", hits(), reranker, top_n=3)
    assert notes == {"reranker": reranker.label}
    assert sorted(h.ranks["rerank"] for h in out) == [1, 2, 3]
    scores = [h.rerank_score or 0.0 for h in out]
    assert scores == sorted(scores, reverse=True)
    assert all("bm25" in h.ranks for h in out)


def test_it_reranks_only_the_top_n():
    out, _ = rerank("q", hits(), ByLength(), top_n=2)
    assert [h.passage_id for h in out] == [2, 1, 3]
    assert out[2].rerank_score is None


def test_it_records_reranker_none_for_an_unloadable_path(tmp_path):
    reranker, reason = load_reranker(str(tmp_path / "no-such-model"))
    assert reranker is None
    assert "cannot load" in reason
    out, notes = rerank("q", hits(), reranker, reason=reason)
    assert notes["reranker"] == "none" and "cannot load" in notes["reranker_reason"]
    assert [h.passage_id for h in out] == [1, 2, 3]  # fused order stands


def test_it_records_reranker_none_when_not_configured():
    reranker, reason = load_reranker("")
    assert reranker is None and reason == "RERANKER_MODEL is not set"


@pytest.mark.django_db
def test_it_says_so_in_the_production_path(corpus, tmp_path):
    reranker, reason = load_reranker(str(tmp_path / "missing"))
    retriever = Retriever(reranker=reranker, reranker_reason=reason, config=RetrievalConfig())
    result = retriever.retrieve(RetrievalRequest(text="TP53", mode="hybrid+rerank"))
    assert result.notes["reranker"] == "none"
    plain = retriever.retrieve(RetrievalRequest(text="TP53", mode="hybrid"))
    assert [h.passage_id for h in result.hits] == [h.passage_id for h in plain.hits]
    assert "reranker" not in plain.notes
    default = retriever.retrieve(RetrievalRequest(text="TP53"))  # the production default
    assert default.notes["reranker"] == "none"


@pytest.mark.django_db
def test_it_reranks_in_the_production_path(corpus, tiny_cross_encoder):
    reranker, _ = load_reranker(tiny_cross_encoder, max_length=64)
    assert reranker is not None
    retriever = Retriever(reranker=reranker, config=RetrievalConfig(rerank_top_n=5))
    result = retriever.retrieve(RetrievalRequest(text="TP53 mutation", mode="hybrid+rerank"))
    assert result.notes["reranker"] == reranker.label
    assert result.hits[0].ranks["rerank"] == 1
    assert "rerank_ms" in result.timings_ms
