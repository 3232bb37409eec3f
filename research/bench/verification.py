"""SciFact benchmark of the production verification path (``bench_verification``).

Oracle: each claim against its cited abstracts. Open: each claim's support and
refutation queries (:mod:`research.pipeline.counter`) through an injected retrieval
callable, pooled, then verified. SUPPORT / CONTRADICT / NEI map to PASS / FAIL /
UNCERTAIN. On the train split the learned verifier scores each claim with the fold
model that never saw it (out-of-fold), so the figures are not in-sample.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from research.bench.scifact import CLASSES, SciFactClaim, SciFactDoc
from research.bench.verifier_training import metrics
from research.pipeline.claims.classify import describe
from research.pipeline.counter import Retrieve, counter_queries, gather_pools
from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.records import ClaimInput, ClaimVerdict, Pools, Status

if TYPE_CHECKING:
    from numpy.typing import NDArray

STATUS_TO_CLASS = {
    Status.PASS: "SUPPORT",
    Status.FAIL: "CONTRADICT",
    Status.UNCERTAIN: "NEI",
    Status.UNVERIFIABLE: "NEI",
}


@dataclass
class BenchResult:
    gold: list[int] = field(default_factory=list)
    pred: list[int] = field(default_factory=list)
    confidence: list[float] = field(default_factory=list)
    seconds: float = 0.0
    details: list[dict[str, Any]] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        gold, pred = np.asarray(self.gold), np.asarray(self.pred)
        out = metrics(gold, pred)
        out |= decision_metrics(gold, pred, np.asarray(self.confidence))
        minutes = self.seconds / 60 if self.seconds else float("nan")
        out["claims_per_min"] = len(self.gold) / minutes if self.seconds else 0.0
        return {k: round(v, 4) for k, v in out.items()}


def decision_metrics(
    gold: NDArray[np.int64], pred: NDArray[np.int64], confidence: NDArray[np.float64]
) -> dict[str, float]:
    """What a reviewer relies on: how often FAIL hits a true finding, how often PASS is
    right, how many claims PASS at all, and whether the stated confidence means anything.

    - ``false_fail_rate``: share of gold-SUPPORT claims predicted FAIL;
    - ``pass_precision``: share of PASS verdicts whose gold label is SUPPORT;
    - ``pass_coverage``: share of all claims that PASS (a verifier that abstains on
      everything has escape 0 and coverage 0);
    - ``fail_precision``: share of FAIL verdicts whose gold label is CONTRADICT;
    - ``support_recall``: share of gold-SUPPORT claims that PASS;
    - ``precision_<label>`` / ``recall_<label>``: per gold label (support, contradict, nei);
    - ``ece``: expected calibration error of the verdict's confidence as the probability
      that a decisive verdict (PASS or FAIL) is right, 10 equal-width bins.
    """
    support, contradict = CLASSES.index("SUPPORT"), CLASSES.index("CONTRADICT")
    out: dict[str, float] = {}
    gold_support = gold == support
    out["false_fail_rate"] = _share(pred[gold_support] == contradict)
    out["pass_precision"] = _share(gold[pred == support] == support)
    out["fail_precision"] = _share(gold[pred == contradict] == contradict)
    out["pass_coverage"] = _share(pred == support)
    out["support_recall"] = _share(pred[gold_support] == support)
    for i, name in enumerate(CLASSES):
        out[f"precision_{name.lower()}"] = _share(gold[pred == i] == i)
        out[f"recall_{name.lower()}"] = _share(pred[gold == i] == i)
    decisive = (pred == support) | (pred == contradict)
    out["ece"] = expected_calibration_error(
        confidence[decisive] if len(confidence) == len(pred) else np.zeros(0),
        (gold == pred)[decisive],
    )
    out["decisive"] = float(decisive.sum())
    return out


def _share(mask: NDArray[np.bool_]) -> float:
    return float(mask.mean()) if len(mask) else 0.0


def expected_calibration_error(
    confidence: NDArray[np.float64], correct: NDArray[np.bool_], bins: int = 10
) -> float:
    """Σ_bins (n_b / n) · |accuracy_b − mean confidence_b| over equal-width bins."""
    if len(confidence) == 0:
        return 0.0
    edges = np.minimum((np.clip(confidence, 0.0, 1.0) * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            gap = abs(float(correct[inside].mean()) - float(confidence[inside].mean()))
            total += float(inside.sum()) / len(confidence) * gap
    return total


def claim_input(claim: SciFactClaim) -> ClaimInput:
    info = describe(claim.text)
    return ClaimInput(
        claim_id=str(claim.claim_id),
        text=claim.text,
        claim_type=str(info["claim_type"]),
        entities=tuple(info["entities"]),  # type: ignore[arg-type]
        hedges=tuple(info["hedges"]),  # type: ignore[arg-type]
        time_sensitive=info["time_sensitivity"] in ("current-state", "fast-changing"),
    )


def _record(result: BenchResult, claim: SciFactClaim, verdict: ClaimVerdict, n: int) -> None:
    result.gold.append(CLASSES.index(claim.label))
    result.pred.append(CLASSES.index(STATUS_TO_CLASS[verdict.status]))
    result.confidence.append(float(verdict.confidence))
    result.details.append(
        {
            "claim_id": claim.claim_id,
            "gold": claim.label,
            "status": str(verdict.status),
            "confidence": verdict.confidence,
            "flags": list(verdict.flags),
            "shadow_status": verdict.shadow_status,
            "evidence": n,
            "support_ids": verdict.support_ids,
            "refute_ids": verdict.refute_ids,
            "discarded": verdict.discard_counts(),
            "rationale": verdict.rationale,
            # Every family's vote per passage, so a confusion per family can be read
            # from one run: [family, evidence id, verdict, score, shadow].
            "votes": [
                [v.family, v.evidence_id, str(v.verdict), round(v.score, 4), v.shadow]
                for v in verdict.votes
            ],
        }
    )


def run_oracle(
    claims: Sequence[SciFactClaim],
    docs: dict[int, SciFactDoc],
    config: VerifyConfig,
    progress: Callable[[int], None] | None = None,
) -> BenchResult:
    result = BenchResult()
    started = time.perf_counter()
    for i, claim in enumerate(claims):
        items = tuple(docs[d].item() for d in claim.cited_doc_ids if d in docs)
        verdict = verify_claim(claim_input(claim), Pools(support=items), config)
        _record(result, claim, verdict, len(items))
        if progress and i % 50 == 0:
            progress(i)
    result.seconds = time.perf_counter() - started
    return result


def run_open(
    claims: Sequence[SciFactClaim],
    retrieve: Retrieve,
    config: VerifyConfig,
    *,
    k: int = 3,
    progress: Callable[[int], None] | None = None,
) -> BenchResult:
    result = BenchResult()
    started = time.perf_counter()
    for i, claim in enumerate(claims):
        ci = claim_input(claim)
        pools = gather_pools(counter_queries(ci.text, ci.claim_type, ci.entities), retrieve, k=k)
        verdict = verify_claim(ci, pools, config)
        _record(result, claim, verdict, len(pools.items()))
        if progress and i % 50 == 0:
            progress(i)
    result.seconds = time.perf_counter() - started
    return result


def family_calls(details: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    """Each judging family's own claim-level call (SUPPORT / CONTRADICT / NEI) per claim:
    SUPPORT when it votes ``supports`` on any passage, else CONTRADICT when it votes
    ``contradicts`` on one, else NEI. Shadow and check votes are the aggregate's business;
    these are the families' raw opinions, for comparing their errors."""
    families = sorted({v[0] for d in details for v in d["votes"] if v[0] != "rules" and not v[4]})
    calls: dict[str, list[str]] = {f: [] for f in families}
    for detail in details:
        for family in families:
            said = {v[2] for v in detail["votes"] if v[0] == family and not v[4]}
            calls[family].append(
                "SUPPORT"
                if "supports" in said
                else "CONTRADICT"
                if "contradicts" in said
                else "NEI"
            )
    return calls


def agreement_table(details: Sequence[dict[str, Any]]) -> list[str]:
    """Per gold label: each family's accuracy alone, and for each pair of families how
    often both are right, and how often the second is wrong when the first is (errors
    that coincide cannot be caught by a quorum of the two)."""
    calls = family_calls(details)
    gold = [d["gold"] for d in details]
    lines = ["family/pair | gold | claims | right (both right) | P(second wrong | first wrong)"]
    names = list(calls)
    for label in CLASSES:
        index = [i for i, g in enumerate(gold) if g == label]
        if not index:
            continue
        for family in names:
            right = sum(calls[family][i] == label for i in index)
            lines.append(f"{family} | {label} | {len(index)} | {right / len(index):.3f} | -")
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                fa, fb = names[a], names[b]
                both = sum(calls[fa][i] == label == calls[fb][i] for i in index)
                wrong_a = [i for i in index if calls[fa][i] != label]
                coincide = sum(calls[fb][i] != label for i in wrong_a)
                share = f"{coincide / len(wrong_a):.3f}" if wrong_a else "-"
                lines.append(
                    f"{fa}+{fb} | {label} | {len(index)} | {both / len(index):.3f} | {share}"
                )
    return lines


class MemoVerifier:
    """A verifier whose votes are computed once per claim and passage set, so several
    aggregation variants (an ablation) read the same votes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.family = inner.name, inner.family
        self._votes: dict[tuple[str, tuple[str, ...]], list[Any]] = {}

    def judge(self, claim: ClaimInput, items: Sequence[Any]) -> list[Any]:
        key = (claim.fingerprint, tuple(i.evidence_id for i in items))
        if key not in self._votes:
            self._votes[key] = self.inner.judge(claim, items)
        return self._votes[key]


def ablation_variants(config: VerifyConfig) -> dict[str, VerifyConfig]:
    """The shipped configuration, then each hand predicate of the verdict path off, then
    each family out.

    The hand predicates: the aggregate's lexical predicates (``PREDICATES``, on the same
    votes), its corroboration of a judging family's low-confidence contradiction by the
    rules, the quote floor of vote admission, each check of the ``rules`` family
    (``RULE_CHECKS``), the rules' fixed scores (one score, the credible level, instead)
    and the ``align`` family's support veto (:func:`~.align.support_vetoed`). Families
    whose votes do not change are memoised, so every variant reads the same votes.
    """
    from research.pipeline.verify.admission import QuotePolicy
    from research.pipeline.verify.aggregate import PREDICATES

    memo = tuple(MemoVerifier(v) for v in config.verifiers)
    shipped = replace(config, verifiers=memo)
    variants = {"as shipped": shipped}
    for predicate in PREDICATES:
        aggregate = replace(config.aggregate, without=frozenset({predicate}))
        variants[f"without {predicate}"] = replace(shipped, aggregate=aggregate)
    every = replace(config.aggregate, without=frozenset(PREDICATES))
    variants["without every predicate"] = replace(shipped, aggregate=every)
    lone = replace(config.aggregate, corroborated_contradictions=False)
    variants["without corroborated_contradictions"] = replace(shipped, aggregate=lone)
    floor = QuotePolicy(min_chars=0, min_content_words=0)
    variants["without the quote floor"] = replace(shipped, quotes=floor)
    variants |= _verifier_variants(config, shipped)
    for family in sorted({v.family for v in memo}):
        kept = tuple(v for v in memo if v.family != family)
        variants[f"without family {family}"] = replace(shipped, verifiers=kept)
    return variants


def _verifier_variants(config: VerifyConfig, shipped: VerifyConfig) -> dict[str, VerifyConfig]:
    """The variants that change a family's own votes: each rules check off, the rules at
    one score, align without its support veto (each in place of the shipped family)."""
    from research.pipeline.verify.align import AlignVerifier
    from research.pipeline.verify.rules import RULE_CHECKS, RulesVerifier

    def swap(index: int, verifier: Any) -> VerifyConfig:
        verifiers = list(shipped.verifiers)
        verifiers[index] = verifier
        return replace(shipped, verifiers=tuple(verifiers))

    variants: dict[str, VerifyConfig] = {}
    for i, verifier in enumerate(config.verifiers):
        if isinstance(verifier, RulesVerifier):
            base = verifier.config
            for check in RULE_CHECKS:
                rules = RulesVerifier(replace(base, without=frozenset({check})))
                variants[f"without rules {check}"] = swap(i, rules)
            credible = config.aggregate.min_contradict_score
            flat = replace(base, contradiction_score=credible, clash_score=credible)
            variants[f"rules at one score ({credible})"] = swap(i, RulesVerifier(flat))
        elif isinstance(verifier, AlignVerifier):
            unvetoed = copy.copy(verifier)
            unvetoed.veto = False
            variants["without align.support_vetoed"] = swap(i, MemoVerifier(unvetoed))
    return variants
