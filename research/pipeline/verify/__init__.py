"""Claim verification: admitted evidence, named verifier families, conservative verdicts.

Entry point: :func:`verify_claim` (pure over records). :func:`default_verifiers` builds
the configured families from settings and says, in ``notes``, which ones are absent;
:func:`default_config` is what the verify stage and re-verification use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from research.pipeline.verify.admission import QuotePolicy, admit_evidence, admit_votes
from research.pipeline.verify.aggregate import AggregateConfig, aggregate
from research.pipeline.verify.records import (
    ClaimInput,
    ClaimVerdict,
    EvidenceItem,
    Pools,
    Vote,
)
from research.providers.base import ProviderError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from research.providers.embedder import Embedder

__all__ = [
    "ClaimInput",
    "ClaimVerdict",
    "EvidenceItem",
    "Pools",
    "VerifyConfig",
    "Verifier",
    "default_config",
    "default_verifiers",
    "verify_claim",
]


class Verifier(Protocol):
    name: str
    family: str

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]: ...


@dataclass(frozen=True)
class VerifyConfig:
    verifiers: tuple[Verifier, ...] = ()
    aggregate: AggregateConfig = field(default_factory=AggregateConfig)
    quotes: QuotePolicy = field(default_factory=QuotePolicy)
    notes: dict[str, str] = field(default_factory=dict)  # families absent, and why


def verify_claim(
    claim: ClaimInput, pools: Pools | Sequence[EvidenceItem], config: VerifyConfig
) -> ClaimVerdict:
    """1. admit evidence, 2. collect votes, 3. admit votes, 4. aggregate conservatively."""
    items = pools.items() if isinstance(pools, Pools) else list(pools)
    admitted, rejected = admit_evidence(items, config.quotes)
    notes = dict(config.notes)
    votes: list[Vote] = []
    for verifier in config.verifiers:
        try:
            votes.extend(verifier.judge(claim, admitted))
        except ProviderError as exc:
            notes[verifier.name] = f"failed, no votes: {exc}"
    valid, discarded = admit_votes(claim, admitted, votes, config.quotes)
    return aggregate(
        claim,
        admitted,
        valid,
        discarded=discarded,
        rejected=rejected,
        notes=notes,
        config=config.aggregate,
    )


Encode = Callable[[list[str]], "NDArray[np.float32]"]

# Sentence vectors a verify stage keeps in memory (≈ 1.5 KB each for MiniLM).
STAGE_EMBEDDING_CACHE = 50_000


def default_config(encode: Encode | None = None) -> VerifyConfig:
    """The configured verifier families, encoding through ``encode`` (default: one memory
    cache of sentences over the verification encoder, ``verify_encoder()``)."""
    if encode is None:
        from research.pipeline.verify.embedcache import EmbeddingCache

        encode = EmbeddingCache(verify_encoder().encode, max_entries=STAGE_EMBEDDING_CACHE).encode
    verifiers, notes = default_verifiers(encode)
    return VerifyConfig(verifiers=verifiers, notes=notes)


def verify_encoder() -> Embedder:
    """The sentence encoder of verification: ``VERIFY_EMBEDDING_BACKEND`` (default ``onnx``,
    float32: the learned verifier's thresholds were fitted on exact vectors, and int8 ones
    are not the same features)."""
    from django.conf import settings

    from research.providers.embedder import Embedder

    base = Embedder.from_settings()
    return Embedder(
        base.model_name, base.batch_size, settings.VERIFY_EMBEDDING_BACKEND, base.cache_dir
    )


def default_verifiers(
    encode: Encode | None = None, *, out_of_fold: bool = False
) -> tuple[tuple[Verifier, ...], dict[str, str]]:
    """Rules always; learned when its weights load; NLI and LLM judge when configured."""
    from research.pipeline.verify.learned import (
        LearnedUnavailable,
        LearnedVerifier,
        VerifierWeights,
    )
    from research.pipeline.verify.llm_judge import LLMJudge
    from research.pipeline.verify.nli import NLIUnavailable, NLIVerifier
    from research.pipeline.verify.rules import RulesVerifier

    verifiers: list[Verifier] = [RulesVerifier()]
    notes: dict[str, str] = {}
    try:
        if encode is None:
            encode = verify_encoder().encode
        verifiers.append(LearnedVerifier(VerifierWeights.load(), encode, out_of_fold=out_of_fold))
    except LearnedUnavailable as exc:
        notes["learned"] = f"unavailable: {exc}"
    try:
        verifiers.append(NLIVerifier.from_settings())
    except NLIUnavailable as exc:
        notes["nli"] = str(exc.args[0])
    judge = LLMJudge.from_settings()
    if judge is None:
        notes["llm"] = "not configured (settings.LLM_BASE_URL / LLM_MODEL are empty)"
    else:
        verifiers.append(judge)
    return tuple(verifiers), notes
