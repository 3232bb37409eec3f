"""The verify stage encodes every sentence it will judge once, ahead, in one call."""

from __future__ import annotations

import pytest

from ledger.readers import evidence_item, passage_input
from ledger.services.claims import do_save_claims
from research.pipeline.claims import mine_claims
from research.pipeline.verify import STAGE_EMBEDDING_CACHE, default_config, verify_encoder
from research.pipeline.verify.embedcache import EmbeddingCache
from research.stages.counter import gather
from research.stages.verify import encode_ahead, verify
from tests.factories import make_passage, make_plan, make_run, make_snapshot

pytestmark = pytest.mark.django_db

TRIAL = (
    "Vitamin D and falls. In a randomized trial of 2,256 women aged 70 or older, an annual "
    "dose of 500,000 IU of cholecalciferol increased the rate of falls by 15%. Fractures "
    "were 26% more frequent in the vitamin D group than in the placebo group."
)
POOLED = (
    "Pooled analysis. Daily vitamin D of at least 800 IU reduced hip fracture by 30% in "
    "persons aged 65 or older; lower doses had no effect on fractures."
)


class Counting:
    def __init__(self, inner):
        self.inner, self.calls, self.texts = inner, 0, 0

    def __call__(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner(texts)


def test_it_encodes_the_stage_sentences_once_before_judging(author):
    run = make_run(make_plan(author), state="mining")
    trial = make_passage(make_snapshot(TRIAL, title="Vitamin D and falls"))
    pooled = make_passage(make_snapshot(POOLED, title="Pooled analysis", canonical_id="doi:10/p"))
    claims = do_save_claims(run, mine_claims([passage_input(trial)]))
    assert len(claims) >= 2
    for claim in claims:
        gather(claim, lambda text, k: [evidence_item(pooled, "support")])
    counting = Counting(verify_encoder().encode)
    cache = EmbeddingCache(counting, max_entries=STAGE_EMBEDDING_CACHE)
    config = default_config(cache.encode)

    encode_ahead(claims, cache)
    for claim in claims:
        verify(claim, config)

    assert counting.calls == 1 and counting.texts > len(claims)
    assert all(claim.status != "pending" for claim in claims)


def test_it_judges_with_the_float32_export_unless_told_otherwise(settings):
    assert verify_encoder().backend == "onnx"
    assert verify_encoder().label.endswith("[onnx]")
    settings.VERIFY_EMBEDDING_BACKEND = "torch"
    assert verify_encoder().backend == "torch"
