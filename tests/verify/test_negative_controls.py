"""Negative controls: true-but-unstated facts and near misses never PASS.

``tests/fixtures/verify/negative_controls.jsonl``: 58 claims, each with an on-topic
passage that does not state it — 26 facts that are true in the world but absent from
the passage ("Paris is the capital of France" against a paragraph on the blue sky), and
32 near misses (another population, number, entity, outcome, period or cause; a
hedged finding stated as certain; association stated as cause). Every family set the
product can be configured with is tried, including judges that agree with everything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.aggregate import AggregateConfig
from research.pipeline.verify.align import AlignVerifier
from research.pipeline.verify.align import load_weights as load_align_weights
from research.pipeline.verify.coverage import CoverageVerifier
from research.pipeline.verify.learned import LearnedVerifier, VerifierWeights
from research.pipeline.verify.llm_judge import LLMJudge
from research.pipeline.verify.nli import NLIVerifier
from research.pipeline.verify.records import ClaimInput, Status
from research.pipeline.verify.rules import RulesVerifier
from research.providers.llm import LLMClient, LLMConfig
from tests.fake_openai import fake_openai

from .helpers import item, judging
from .test_nli import tiny_cross_encoder

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "verify" / "negative_controls.jsonl"
CONTROLS = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def rubber_stamp(label: str, text: str) -> dict[str, Any]:
    """A judge that agrees with every claim, quoting the passage's first sentence."""
    first = text.split(". ")[0]
    return {"verdict": "supports", "quote": first, "confidence": 0.99}


@pytest.fixture(scope="module")
def learned():
    from research.pipeline.verify.embedcache import EmbeddingCache
    from research.providers.embedder import Embedder

    cache = EmbeddingCache(Embedder().encode)  # each sentence encoded once for all sets
    return LearnedVerifier(VerifierWeights.load(), cache.encode)


@pytest.fixture(scope="module")
def align(learned):
    return AlignVerifier(load_align_weights(), learned.encode)


@pytest.fixture(scope="module")
def judges():
    with fake_openai(judging(rubber_stamp)) as a, fake_openai(judging(rubber_stamp)) as b:
        yield [
            LLMJudge(LLMClient(LLMConfig(fake.url, f"yes-{n}")), family=f"llm-{n}")
            for n, fake in enumerate((a, b))
        ]


@pytest.fixture(scope="module")
def family_sets(learned, align, judges, tmp_path_factory):
    entailing_nli = NLIVerifier(tiny_cross_encoder(tmp_path_factory.mktemp("nli"), favour=0))
    offline = (RulesVerifier(), learned, align)
    return {
        "offline default": VerifyConfig(verifiers=offline),
        "offline + strict coverage": VerifyConfig(verifiers=(*offline, CoverageVerifier())),
        "coverage + learned (VERIFIER_COVERAGE, no align)": VerifyConfig(
            verifiers=(RulesVerifier(), CoverageVerifier(), learned)
        ),
        "offline, quorum 1": VerifyConfig(verifiers=offline, aggregate=AggregateConfig(quorum=1)),
        "offline + NLI that always entails": VerifyConfig(verifiers=(*offline, entailing_nli)),
        "offline + two rubber-stamp LLM judges": VerifyConfig(verifiers=(*offline, *judges)),
        "everything, judges in shadow": VerifyConfig(
            verifiers=(*offline, entailing_nli, *judges),
            shadow=frozenset({"llm-0", "llm-1"}),
        ),
    }


def test_it_has_at_least_fifty_controls_of_both_kinds():
    kinds = [row["kind"] for row in CONTROLS]
    assert len(CONTROLS) >= 50
    assert kinds.count("true-but-unstated") >= 20 and kinds.count("near-miss") >= 25


SETS = [
    "offline default",
    "offline + strict coverage",
    "coverage + learned (VERIFIER_COVERAGE, no align)",
    "offline, quorum 1",
    "offline + NLI that always entails",
    "offline + two rubber-stamp LLM judges",
    "everything, judges in shadow",
]


@pytest.mark.parametrize("name", SETS)
def test_no_negative_control_passes_under_any_family_set(family_sets, name):
    passed: list[str] = []
    for row in CONTROLS:
        claim = ClaimInput(f"n{row['id']}", row["claim"])
        verdict = verify_claim(claim, [item("e1", row["passage"])], family_sets[name])
        if verdict.status == Status.PASS:
            passed.append(row["claim"])
    assert passed == []
