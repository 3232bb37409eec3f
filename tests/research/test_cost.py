"""Cost and time per run (issue 25): the usage recorder, the model providers' hooks, and the
runner adding each attempt's seconds and model use to the stage's checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from research import runner
from research.models import RunState, StageCheckpoint, StageStatus
from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.records import ClaimInput, Vote
from research.providers import usage
from research.providers.base import ProviderError
from research.providers.embedder import Embedder
from research.providers.llm import LLMClient
from research.providers.reranker import Reranker
from tests.factories import make_plan, make_run
from tests.fake_openai import fake_openai
from tests.reports.test_llm_writer import restates
from tests.verify.helpers import item

TOKENS = {"prompt_tokens": 120, "completion_tokens": 30}


@pytest.fixture
def llm_server(settings):
    with fake_openai(restates, usage=TOKENS) as fake:
        settings.LLM_BASE_URL = fake.url
        settings.LLM_MODEL = "fake-writer"
        yield fake


def cost_of(cp: StageCheckpoint) -> usage.Cost:
    cp.refresh_from_db()
    return usage.Cost.from_json(cp.counters["cost"])


# --- the recorder and the providers' hooks ------------------------------------------------


def test_a_model_call_outside_a_recorder_is_only_run():
    with usage.measure("encoder", items=3) as call:
        call.tokens(1, 2)  # nowhere to go: nothing raises


def test_it_records_llm_calls_with_the_servers_tokens(llm_server):
    client = LLMClient.from_settings()
    assert client is not None
    with usage.recording() as recorder:
        client.chat([{"role": "user", "content": "[C1] Aspirin lowers fever."}])
        client.chat([{"role": "user", "content": "[C1] Aspirin lowers fever."}])
    spent = recorder.spent()
    llm = spent.families["llm"]
    assert (llm.calls, llm.prompt_tokens, llm.completion_tokens) == (2, 240, 60)
    assert llm.seconds > 0 and spent.wall_s > 0 and spent.cpu_s >= 0
    assert spent.llm_words().startswith("2 calls, 240 tokens in, 60 out, ")


def test_a_server_without_usage_is_said_to_report_no_tokens(settings):
    with fake_openai(lambda seen: "ok") as fake, usage.recording() as recorder:
        LLMClient.for_endpoint(fake.url, "m").chat([{"role": "user", "content": "hi"}])
    assert recorder.spent().llm_words().startswith("1 call, tokens not reported by the server")


class FakeCrossEncoder:
    def predict(self, pairs, **kwargs):
        return [0.5] * len(pairs)


class ZeroEmbedder(Embedder):
    def _encode(self, texts):
        return np.zeros((len(texts), 4), dtype=np.float32)


def test_encoder_and_reranker_calls_count_their_texts_as_items():
    with usage.recording() as recorder:
        ZeroEmbedder().encode(["a", "b", "c"])
        Reranker(FakeCrossEncoder(), "fake").score("q", ["p1", "p2"])
        Reranker(FakeCrossEncoder(), "fake").score("q", [])  # nothing scored: no call
    families = recorder.spent().families
    assert (families["encoder"].calls, families["encoder"].items) == (1, 3)
    assert (families["reranker"].calls, families["reranker"].items) == (1, 2)


class Abstains:
    name = family = "fake"

    def judge(self, claim: ClaimInput, items) -> list[Vote]:
        return []


class Fails:
    name = family = "broken"

    def judge(self, claim: ClaimInput, items) -> list[Vote]:
        raise ProviderError("down", permanent=True, provider="broken")


def test_each_verifier_family_records_one_call_per_claim_it_judged():
    claim = ClaimInput("c1", "Aspirin lowers fever.")
    passage = item("e1", "In a trial, aspirin lowers fever in adults.", source_key="s1")
    config = VerifyConfig(verifiers=(Abstains(), Fails()))
    with usage.recording() as recorder:
        verify_claim(claim, [passage], config)
        verify_claim(claim, [], config)  # no evidence admitted: nobody is asked
    families = recorder.spent().families
    assert (families["verifier:fake"].calls, families["verifier:fake"].items) == (1, 1)
    assert families["verifier:broken"].calls == 1  # a failed call is still spent


# --- the runner records a stage's cost on its checkpoint ----------------------------------


@pytest.mark.django_db
def test_seconds_and_tokens_add_up_across_a_retried_stage(llm_server, author, monkeypatch):
    attempts: list[int] = []

    def flaky(ctx):
        client = LLMClient.from_settings()
        assert client is not None
        client.chat([{"role": "user", "content": "[C1] Aspirin lowers fever."}])
        attempts.append(1)
        if len(attempts) == 1:
            raise ProviderError("the search service is down", permanent=False, provider="x")
        return RunState.SEARCHING

    monkeypatch.setitem(runner.HANDLERS, RunState.QUEUED, flaky)
    queued = make_run(make_plan(author), state=RunState.QUEUED)
    with pytest.raises(runner.StageRetry):
        runner.step(queued.code)
    cp = queued.checkpoints.get(stage=RunState.QUEUED)
    first = cost_of(cp)
    assert first.families["llm"].calls == 1 and first.wall_s > 0  # a failed attempt counts

    assert runner.step(queued.code, attempt=1).state == RunState.SEARCHING
    both = cost_of(cp)
    assert cp.attempts == 2 and cp.status == StageStatus.DONE
    llm = both.families["llm"]
    assert (llm.calls, llm.prompt_tokens, llm.completion_tokens) == (2, 240, 60)
    assert both.wall_s > first.wall_s and both.cpu_s >= first.cpu_s
    assert cp.counters["wall_s"] >= 0  # the stage's elapsed time is still there
