"""Re-verification: a narrowed text judged against the evidence the claim already has,
and the typed record of what the verifiers found (:class:`review.records.Reverification`)."""

from __future__ import annotations

from dataclasses import replace

from ledger.models import Claim, Verdict
from ledger.readers import claim_input, linked_items
from research.pipeline.verify import (
    ClaimVerdict,
    VerifyConfig,
    default_config,
    restate,
    verify_claim,
)
from research.pipeline.verify.records import Status
from research.providers.base import ProviderError
from review.records import Reverification
from review.services.gate import gate_policy


def reverify(claim: Claim, text: str) -> Reverification:
    """Re-verify ``text`` against the claim's existing evidence; never invents a verdict.

    Unavailable (with the reason) when no verifier can run, else the verifiers' status
    (pass, fail, uncertain), rationale, confidence, flags, votes and notes.
    """
    try:
        verdict = reverify_claim_text(claim, text)
    except ProviderError as exc:
        return Reverification.unavailable(f"the verifiers could not run: {exc}")
    return Reverification.of_verdict(verdict)


def reverify_claim_text(
    claim: Claim, text: str, config: VerifyConfig | None = None
) -> ClaimVerdict:
    """Verify a narrowed wording against the same evidence the claim has; writes nothing.

    1. The families judge the new wording against the evidence. A contradiction on the
       claim's own source stays a possible one: the new wording was not mined from it.
    2. When that is short of PASS only for want of support (no contradiction, credible or
       possible), and the current wording PASSed on this evidence, the families judge
       whether the new wording restates it (:func:`restate.restates`: attribution and
       markup set aside, entailment both ways); if it does, it PASSes as a restatement
       (issue 26: every cleanup of a PASS claim came back UNCERTAIN). A change of meaning
       (a negation, a number, a broader or narrower scope) is no restatement and keeps
       the verdict on the evidence.
    """
    quorum = gate_policy(claim.run.plan_version.plan).verifier_quorum
    config = config or default_config(quorum=quorum)
    config = replace(config, aggregate=replace(config.aggregate, own_source_contradicts=True))
    verdict = verify_claim(claim_input(claim, text=text), linked_items(claim), config)
    if not _may_restate(claim, verdict):
        return verdict
    wording = replace(
        claim_input(claim), needs_triangulation=False, time_sensitive=False, high_impact=False
    )
    judged = restate.restates(
        wording,
        text,
        lambda hypothesis, premise: verify_claim(
            hypothesis, [restate.premise_item(premise)], config
        ),
    )
    if not judged.holds:
        verdict.rationale += (
            " Not a restatement of the claim it replaces, which PASSed: "
            + judged.reason.split(": ", 1)[0]
            + "."
        )
        return verdict
    return _restated(claim, verdict, judged)


def _may_restate(claim: Claim, verdict: ClaimVerdict) -> bool:
    return (
        claim.status == Verdict.PASS
        and verdict.status == Status.UNCERTAIN
        and not verdict.refute_ids
        and not verdict.possible_contradictions
        and not verdict.unavailable
    )


def _restated(claim: Claim, verdict: ClaimVerdict, judged: restate.Restatement) -> ClaimVerdict:
    """The new wording's verdict: PASS on the strength of the claim it restates."""
    verdict.status = Status.PASS
    verdict.confidence = round(min(claim.confidence or 1.0, judged.confidence), 4)
    verdict.flags = sorted(set(verdict.flags) | set(claim.flags or []))
    verdict.independent_sources = claim.independent_sources
    verdict.rationale = (
        f"PASS as a restatement: {judged.reason}, and the claim it replaces "
        f"(“{claim.text}”) PASSed on this evidence. On the evidence alone the new wording "
        f"was {verdict.rationale}"
    )
    return verdict
