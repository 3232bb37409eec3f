"""Negative controls: true-but-unstated facts and near misses never PASS.

``tests/fixtures/verify/negative_controls.jsonl``: 58 claims, each with an on-topic
passage that does not state it — 26 facts that are true in the world but absent from
the passage ("Paris is the capital of France" against a paragraph on the blue sky), and
32 near misses (another population, number, entity, outcome, period or cause; a
hedged finding stated as certain; association stated as cause).
``negative_controls_more.jsonl``: 172 more from eleven fields (medicine, public health,
nutrition, climate, ecology, economics, law, history, software, physics, materials):
true-but-unstated facts, near misses, other populations, numeric flips and negation
flips. Every family set the product can be configured with is tried, including the
shipped entailment model and judges that agree with everything.

:data:`KNOWN_PASSES` are the controls that PASS today under some family set (issue 22,
open): a separate strict-xfail test names them, so each fixed one must leave the list.
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

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "verify"
CONTROLS = [
    json.loads(line)
    for name in ("negative_controls.jsonl", "negative_controls_more.jsonl")
    for line in (FIXTURES / name).read_text().splitlines()
    if line.strip()
]
# Negation flips that learned + align pass today ("made builds faster" against "made
# builds slower"; "is thread-safe" against "is not thread-safe"): the rules family does
# not read these negations and the NLI family is off by default (issue 22).
KNOWN_PASSES = {178, 179}


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
    shipped = NLIVerifier()
    return {
        "offline default": VerifyConfig(verifiers=offline),
        "offline + strict coverage": VerifyConfig(verifiers=(*offline, CoverageVerifier())),
        "coverage + learned (VERIFIER_COVERAGE, no align)": VerifyConfig(
            verifiers=(RulesVerifier(), CoverageVerifier(), learned)
        ),
        "offline, quorum 1": VerifyConfig(verifiers=offline, aggregate=AggregateConfig(quorum=1)),
        "offline + NLI that always entails": VerifyConfig(verifiers=(*offline, entailing_nli)),
        "offline + the shipped NLI model": VerifyConfig(verifiers=(*offline, shipped)),
        "offline + two rubber-stamp LLM judges": VerifyConfig(verifiers=(*offline, *judges)),
        "everything, judges in shadow": VerifyConfig(
            verifiers=(*offline, entailing_nli, *judges),
            shadow=frozenset({"llm-0", "llm-1"}),
        ),
    }


def test_it_has_at_least_two_hundred_controls_of_every_kind_from_several_fields():
    kinds = [row["kind"] for row in CONTROLS]
    assert len(CONTROLS) >= 200 and len({row["id"] for row in CONTROLS}) == len(CONTROLS)
    for kind in ("true-but-unstated", "near-miss", "other-population", "numeric-flip"):
        assert kinds.count(kind) >= 20, kind
    assert kinds.count("negation-flip") >= 20
    assert len({row["domain"] for row in CONTROLS if "domain" in row}) >= 8


SETS = [
    "offline default",
    "offline + strict coverage",
    "coverage + learned (VERIFIER_COVERAGE, no align)",
    "offline, quorum 1",
    "offline + NLI that always entails",
    "offline + the shipped NLI model",
    "offline + two rubber-stamp LLM judges",
    "everything, judges in shadow",
]


@pytest.mark.parametrize("name", SETS)
def test_no_negative_control_passes_under_any_family_set(family_sets, name):
    passed = [row["claim"] for row in _passing(family_sets[name]) if row["id"] not in KNOWN_PASSES]
    assert passed == []


@pytest.mark.xfail(strict=True, reason="issue 22, open: see KNOWN_PASSES")
def test_the_known_negation_flips_do_not_pass_under_the_offline_default(family_sets):
    passed = [row["id"] for row in _passing(family_sets["offline default"])]
    assert not set(passed) & KNOWN_PASSES


def _passing(config: VerifyConfig) -> list[dict[str, Any]]:
    rows = []
    for row in CONTROLS:
        claim = ClaimInput(f"n{row['id']}", row["claim"])
        verdict = verify_claim(claim, [item("e1", row["passage"])], config)
        if verdict.status == Status.PASS:
            rows.append(row)
    return rows
