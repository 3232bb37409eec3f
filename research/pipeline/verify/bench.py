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
from typing import Any

import numpy as np

from research.pipeline.claims.classify import describe
from research.pipeline.counter import Retrieve, counter_queries, gather_pools
from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.records import ClaimInput, ClaimVerdict, Pools, Status
from research.pipeline.verify.scifact import CLASSES, SciFactClaim, SciFactDoc
from research.pipeline.verify.training import metrics

STATUS_TO_CLASS = {Status.PASS: "SUPPORT", Status.FAIL: "CONTRADICT", Status.UNCERTAIN: "NEI"}


@dataclass
class BenchResult:
    gold: list[int] = field(default_factory=list)
    pred: list[int] = field(default_factory=list)
    seconds: float = 0.0
    details: list[dict[str, Any]] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        out = metrics(np.asarray(self.gold), np.asarray(self.pred))
        minutes = self.seconds / 60 if self.seconds else float("nan")
        out["claims_per_min"] = len(self.gold) / minutes if self.seconds else 0.0
        return {k: round(v, 4) for k, v in out.items()}


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
    result.details.append(
        {
            "claim_id": claim.claim_id,
            "gold": claim.label,
            "status": str(verdict.status),
            "evidence": n,
            "support_ids": verdict.support_ids,
            "refute_ids": verdict.refute_ids,
            "discarded": verdict.discard_counts(),
            "rationale": verdict.rationale,
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
