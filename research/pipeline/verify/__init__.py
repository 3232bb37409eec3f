"""Claim verification: admitted evidence, named verifier families, conservative verdicts.

Entry point: :func:`verify_claim` (pure over records). :func:`default_verifiers` builds
the configured families from settings and says, in ``notes``, which ones are absent
(not configured) and, in ``unavailable``, which configured ones could not start;
:func:`default_config` is what the verify stage and re-verification use.

Families (``Verifier.family``): ``rules`` (checks: contradictions, overstatement, scope;
never part of a quorum), ``nli`` (the shipped entailment cross-encoder, or ``NLI_MODEL``;
``off`` disables it), ``learned`` and ``align`` (offline, always), ``coverage``
(``VERIFIER_COVERAGE``) and one family per LLM judge (``LLM_JUDGES``). A family listed in
``VERIFIER_SHADOW`` votes in shadow: its votes are stored and shown, never counted.
A counted family that fails makes PASS impossible for the claims it could not judge
("not corroborated by … (unavailable)"): a failing provider is never silently treated
as if it had agreed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
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
from research.providers import usage
from research.providers.base import ProviderError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from research.providers.embedder import Embedder

__all__ = [
    "ClaimInput",
    "Families",
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
    shadow: frozenset[str] = frozenset()  # families whose votes are never counted
    unavailable: dict[str, str] = field(default_factory=dict)  # configured, failed to start

    def family_states(self) -> dict[str, str]:
        """Every family this configuration knows of, in words: counted, check, shadow,
        unavailable (with why) or not configured (with why)."""
        states: dict[str, str] = {}
        for verifier in self.verifiers:
            role = "check" if verifier.family in self.aggregate.check_families else "counted"
            states[verifier.family] = "shadow" if verifier.family in self.shadow else role
        for family, why in self.unavailable.items():
            states[family] = f"unavailable: {why}"
        for family, why in self.notes.items():
            states.setdefault(family, why)
        return states


def verify_claim(
    claim: ClaimInput, pools: Pools | Sequence[EvidenceItem], config: VerifyConfig
) -> ClaimVerdict:
    """1. admit evidence, 2. collect votes (shadow ones marked), 3. admit votes,
    4. aggregate conservatively (shadow votes never count)."""
    items = pools.items() if isinstance(pools, Pools) else list(pools)
    admitted, rejected = admit_evidence(items, config.quotes)
    notes = dict(config.notes)
    unavailable = {f: why for f, why in config.unavailable.items() if f not in config.shadow}
    votes: list[Vote] = []
    for verifier in config.verifiers:
        shadow = verifier.family in config.shadow
        cast: list[Vote] = []
        try:
            if admitted:
                with usage.measure(f"verifier:{verifier.family}", items=len(admitted)):
                    cast = verifier.judge(claim, admitted)  # timed for the stage's cost
        except ProviderError as exc:
            notes[verifier.name] = f"failed, no votes: {exc}"
            if not shadow and verifier.family not in config.aggregate.check_families:
                unavailable[verifier.family] = f"failed: {exc}"
            continue
        votes.extend(replace(v, shadow=True) for v in cast) if shadow else votes.extend(cast)
    valid, discarded = admit_votes(claim, admitted, votes, config.quotes)
    return aggregate(
        claim,
        admitted,
        valid,
        discarded=discarded,
        rejected=rejected,
        notes=notes,
        unavailable=unavailable,
        config=config.aggregate,
    )


Encode = Callable[[list[str]], "NDArray[np.float32]"]

# Sentence vectors a verify stage keeps in memory (≈ 1.5 KB each for MiniLM).
STAGE_EMBEDDING_CACHE = 50_000


def default_config(
    encode: Encode | None = None, *, quorum: int | None = None, out_of_fold: bool = False
) -> VerifyConfig:
    """The configured verifier families, encoding through ``encode`` (default: one memory
    cache of sentences over the verification encoder, ``verify_encoder()``), with the
    shadow families of ``VERIFIER_SHADOW``.

    ``quorum``: the plan's gate setting (distinct families that must support a PASS).
    ``out_of_fold``: benchmarking on the training claims (see :func:`default_verifiers`).
    """
    from django.conf import settings

    if encode is None:
        from research.pipeline.verify.embedcache import EmbeddingCache

        encode = EmbeddingCache(verify_encoder().encode, max_entries=STAGE_EMBEDDING_CACHE).encode
    families = default_verifiers(encode, out_of_fold=out_of_fold)
    aggregate_config = AggregateConfig() if quorum is None else AggregateConfig(quorum=quorum)
    return VerifyConfig(
        verifiers=families.verifiers,
        notes=families.notes,
        unavailable=families.unavailable,
        shadow=frozenset(settings.VERIFIER_SHADOW),
        aggregate=aggregate_config,
    )


VERIFY_BATCH_TOKENS = 256


def verify_encoder() -> Embedder:
    """The sentence encoder of verification: ``VERIFY_EMBEDDING_BACKEND`` (default ``onnx``,
    float32: the learned verifier's thresholds were fitted on exact vectors, and int8 ones
    are not the same features)."""
    from django.conf import settings

    from research.providers.embedder import Embedder

    base = Embedder.from_settings()
    # Batches of ~256 tokens: twice as fast here as 64 full rows; float32 vectors do not
    # depend on the batch (int8 ones do, hence ENCODER_BATCH_TOKENS=0 for stored passages).
    return Embedder(
        base.model_name,
        base.batch_size,
        settings.VERIFY_EMBEDDING_BACKEND,
        base.cache_dir,
        batch_tokens=VERIFY_BATCH_TOKENS,
    )


@dataclass(frozen=True)
class Families:
    verifiers: tuple[Verifier, ...]
    notes: dict[str, str]  # not configured, and why
    unavailable: dict[str, str]  # configured, but could not start, and why


def default_verifiers(encode: Encode | None = None, *, out_of_fold: bool = False) -> Families:
    """Rules always; NLI (the shipped model unless ``NLI_MODEL`` says otherwise), learned
    and align when their weights load; the strict ``coverage`` family when
    ``VERIFIER_COVERAGE`` is on; LLM judges when configured (a configured one that cannot
    start is *unavailable*, not absent). ``out_of_fold``: benchmarking on the training claims, each
    claim judged by the fold models that never saw it."""
    from django.conf import settings

    from research.pipeline.verify.align import AlignVerifier
    from research.pipeline.verify.align import load_weights as load_align_weights
    from research.pipeline.verify.coverage import CoverageVerifier
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
    unavailable: dict[str, str] = {}
    if settings.VERIFIER_COVERAGE:
        verifiers.append(CoverageVerifier())
    else:
        notes["coverage"] = "not configured (VERIFIER_COVERAGE is off)"
    try:
        verifiers.append(NLIVerifier.from_settings(out_of_fold=out_of_fold))
    except NLIUnavailable as exc:
        if exc.configured:
            unavailable["nli"] = str(exc.args[0])
        else:
            notes["nli"] = str(exc.args[0])
    if encode is None:
        encode = verify_encoder().encode
    try:
        verifiers.append(LearnedVerifier(VerifierWeights.load(), encode, out_of_fold=out_of_fold))
    except LearnedUnavailable as exc:
        unavailable["learned"] = str(exc)
    try:
        verifiers.append(AlignVerifier(load_align_weights(), encode, out_of_fold=out_of_fold))
    except LearnedUnavailable as exc:
        unavailable["align"] = str(exc)
    judges = LLMJudge.from_settings()
    if not judges:
        notes["llm"] = "not configured (settings.LLM_JUDGES and LLM_BASE_URL are empty)"
    verifiers.extend(judges)
    return Families(tuple(verifiers), notes, unavailable)
