"""The verdict-path ablation of ``bench_verification --ablation``: one variant per hand
predicate, each switching off only its own predicate."""

from __future__ import annotations

from research.bench.verification import MemoVerifier, ablation_variants
from research.pipeline.verify import VerifyConfig
from research.pipeline.verify.aggregate import PREDICATES
from research.pipeline.verify.align import AlignVerifier, load_weights
from research.pipeline.verify.records import ClaimInput, VoteVerdict
from research.pipeline.verify.rules import RULE_CHECKS, RulesVerifier

from .helpers import item

CLAIM = ClaimInput("c1", "Aspirin reduces fever in adults.")
NEGATED = item("e1", "Trial. In adults, aspirin did not reduce fever compared with placebo.")


def _config() -> VerifyConfig:
    align = AlignVerifier(load_weights(), encode=lambda texts: None)  # type: ignore[arg-type,return-value]
    return VerifyConfig(verifiers=(RulesVerifier(), align))


def test_it_has_a_variant_for_every_hand_predicate_and_family():
    names = set(ablation_variants(_config()))
    assert {f"without {p}" for p in PREDICATES} <= names
    assert {f"without rules {c}" for c in RULE_CHECKS} <= names
    assert {
        "as shipped",
        "without align.support_vetoed",
        "without corroborated_contradictions",
        "without the quote floor",
        "rules at one score (0.5)",
        "without family rules",
        "without family align",
    } <= names


def test_it_switches_off_only_the_named_rules_check():
    rules = ablation_variants(_config())["without rules direction"].verifiers[0]
    assert isinstance(rules, RulesVerifier) and rules.config.without == {"direction"}
    # The direction check reads "did not reduce" as the opposite of "reduces" …
    assert RulesVerifier().judge_one(CLAIM, NEGATED).rationale.startswith("direction mismatch")
    # … and nothing else of the family does.
    assert rules.judge_one(CLAIM, NEGATED).verdict == VoteVerdict.INSUFFICIENT


def test_it_lifts_align_s_veto_on_a_copy_only():
    config = _config()
    unvetoed = ablation_variants(config)["without align.support_vetoed"].verifiers[1]
    assert isinstance(unvetoed, MemoVerifier) and unvetoed.inner.veto is False
    assert config.verifiers[1].veto is True  # type: ignore[attr-defined]
    assert AlignVerifier.veto is True
