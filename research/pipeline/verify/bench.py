"""SciFact benchmark of the production verification path (``bench_verification``).

Oracle: each claim against its cited abstracts. Open: each claim's support and
refutation queries (:mod:`research.pipeline.counter`) through an injected retrieval
callable, pooled, then verified. SUPPORT / CONTRADICT / NEI map to PASS / FAIL /
UNCERTAIN. On the train split the learned verifier scores each claim with the fold
model that never saw it (out-of-fold), so the figures are not in-sample.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from research.pipeline.claims.classify import describe
from research.pipeline.counter import Retrieve, counter_queries, gather_pools
from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.records import ClaimInput, ClaimVerdict, Pools, Status
from research.pipeline.verify.scifact import CLASSES, SciFactClaim, SciFactDoc
from research.pipeline.verify.training import metrics

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
