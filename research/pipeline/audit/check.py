"""The audit's two judgements of one claim of an imported report, and its mark.

1. :func:`check_citation` — the citation check (seed 002's expected pair): the claim is
   verified against the passages of the source(s) the report itself cites for it, and
   nothing else. The verifier families are the run's own (``verify_claim``), so the
   outcome is as strong as they are: ``supports`` (PASS on the cited source),
   ``contradicts`` (FAIL there), ``insufficient`` (the cited source was read and does
   not settle the claim), ``unverifiable`` (the cited source could not be read: not
   fetched, no text) or ``uncited`` (the sentence cites nothing).
2. The run's ordinary verdict (support and counter-evidence from the libraries, the
   cited source included) is the second judgement; it is made by the verify stage.
3. :func:`disposition` — what the audited report marks the sentence with, from both and
   from the reviewer's decision: ``confirmed`` (its own citation supports it and nothing
   credible contradicts it), ``re-sourced`` (its citation does not support it, another
   source does), ``contradicted``, ``unsupported``, ``unverifiable`` or ``dropped`` (a
   reviewer rejected it). A mark is never better than the evidence: a claim whose
   citation supports it but whose overall verdict is FAIL is ``contradicted``. A claim a
   reviewer rejected as contradicted (reason code ``contradicted``, after reading the cited
   source beside it) is ``contradicted`` too: the person's reading is the stronger
   evidence where the verifier families abstained, and the ledger says who judged.

Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from research.pipeline.language.lexicon import is_meaningful_quote
from research.pipeline.language.sentences import split_sentences
from research.pipeline.verify import Encode, VerifyConfig, verify_claim
from research.pipeline.verify.records import (
    ClaimInput,
    ClaimVerdict,
    EvidenceItem,
    Status,
    VoteVerdict,
)

SUPPORTS = "supports"
CONTRADICTS = "contradicts"
INSUFFICIENT = "insufficient"
UNVERIFIABLE = "unverifiable"
UNCITED = "uncited"
OUTCOMES = (SUPPORTS, CONTRADICTS, INSUFFICIENT, UNVERIFIABLE, UNCITED)

CONFIRMED = "confirmed"
RESOURCED = "re-sourced"
UNSUPPORTED = "unsupported"
CONTRADICTED = "contradicted"
DROPPED = "dropped"
PENDING = "pending"
MARKS = (CONFIRMED, RESOURCED, UNSUPPORTED, CONTRADICTED, UNVERIFIABLE, DROPPED, PENDING)

MARK_WORDS = {
    CONFIRMED: "confirmed by the source it cites",
    RESOURCED: "not supported by the source it cites; supported by another source",
    UNSUPPORTED: "not supported by the source it cites, and by no other source found",
    CONTRADICTED: "contradicted by the evidence (the verifiers found it, or a reviewer judged it)",
    UNVERIFIABLE: "its cited source could not be read",
    DROPPED: "dropped by a reviewer",
    PENDING: "not yet judged",
}


@dataclass(frozen=True)
class CitationCheck:
    """The claim judged against the sources the report cites for it."""

    outcome: str
    reason: str
    evidence_id: str = ""  # the cited passage whose quote decided ("" without one)
    # The quote that decided; when the check is insufficient, the cited source's sentence
    # closest in meaning to the claim (:func:`closest_sentence`), so the reviewer reads what
    # the source says beside the claim.
    quote: str = ""
    confidence: float = 0.0


def check_citation(
    claim: ClaimInput,
    cited: Sequence[EvidenceItem],
    config: VerifyConfig,
    *,
    cites: int,
    unreadable: Sequence[str] = (),
    encode: Encode | None = None,
) -> CitationCheck:
    """Judge ``claim`` against ``cited`` (passages of the sources its sentence cites).

    ``cites``: how many sources the sentence cites (resolved or not); ``unreadable``: why
    each cited source that has no passages could not be read (fetch errors, a dangling
    marker); ``encode``: a sentence encoder, to find the closest sentence of an unsettled
    check (without one, the verifiers' own quotes: :func:`closest_words`).
    """
    if cites == 0:
        return CitationCheck(UNCITED, "the sentence cites no source")
    if not cited:
        why = "; ".join(unreadable) or "no text of the cited source could be read"
        return CitationCheck(UNVERIFIABLE, why)
    verdict = verify_claim(claim, list(cited), config)
    if verdict.status == Status.PASS:
        outcome = SUPPORTS
        decided = verdict.support_ids
    elif verdict.status == Status.FAIL:
        outcome = CONTRADICTS
        decided = verdict.refute_ids
    else:
        outcome, decided = INSUFFICIENT, []
    evidence_id = deciding(verdict, decided, outcome)
    quote = verdict.quotes.get(evidence_id, "")
    if outcome == INSUFFICIENT:
        found = closest_sentence(claim.text, cited, encode) if encode is not None else None
        evidence_id, quote = found or closest_words(verdict)
    reason = verdict.rationale
    if unreadable and outcome != SUPPORTS:
        reason = f"{reason} (also cited, unreadable: {'; '.join(unreadable)})"
    return CitationCheck(
        outcome,
        reason,
        evidence_id=evidence_id,
        quote=quote,
        confidence=verdict.confidence,
    )


def deciding(verdict: ClaimVerdict, ids: Sequence[str], relation: str) -> str:
    """Of the passages that decided (``ids``), the one with the strongest counted vote for
    ``relation``: the passage the rationale's "Best:" quotes ("" when none decided)."""
    if not ids:
        return ""

    def strength(eid: str) -> float:
        scores = [
            v.score
            for v in verdict.votes
            if v.evidence_id == eid and v.verdict == relation and not v.shadow
        ]
        return max(scores, default=0.0)

    return max(ids, key=strength)  # the first of equals, as the verdict lists them


def closest_sentence(
    claim: str, items: Sequence[EvidenceItem], encode: Encode
) -> tuple[str, str] | None:
    """(evidence id, sentence) of the sentence of ``items`` closest in meaning to ``claim``
    (cosine of ``encode``'s vectors; a heading or a fragment too short to prove anything is
    not a candidate); None when there is none."""
    candidates = [
        (item.evidence_id, text)
        for item in items
        for start, end in (list(item.sentences) or split_sentences(item.text))
        if is_meaningful_quote(text := item.text[start:end].strip())
    ]
    if not candidates:
        return None
    vectors = np.asarray(encode([claim, *(text for _, text in candidates)]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    unit = vectors / norms[:, None]
    best = int(np.argmax(unit[1:] @ unit[0]))
    return candidates[best]


def closest_words(verdict: ClaimVerdict) -> tuple[str, str]:
    """(evidence id, quote) of the words a reviewer should read beside a claim the cited
    source does not settle: a contradiction set aside as not credible (its highest-scored
    quote), else the highest-scored support vote's quote; ("", "") when no vote quoted."""
    for wanted in (VoteVerdict.CONTRADICTS, VoteVerdict.SUPPORTS):
        votes = [
            v
            for v in verdict.votes
            if v.verdict == wanted
            and v.quote
            and not v.shadow
            and (
                wanted != VoteVerdict.CONTRADICTS
                or v.evidence_id in verdict.possible_contradictions
            )
        ]
        if votes:
            best = max(votes, key=lambda v: (v.score, v.evidence_id))
            return best.evidence_id, best.quote
    return "", ""


def disposition(
    citation: str, status: str, *, rejected: bool = False, rejected_as: str = ""
) -> str:
    """The audited report's mark for a claim (see the module docstring).

    ``citation``: the citation check's outcome; ``status``: the run's verdict on the claim
    (pass, fail, uncertain, unverifiable, pending); ``rejected``: a reviewer rejected it,
    ``rejected_as`` with that reason code (``contradicted`` marks it contradicted).
    """
    if rejected:
        return CONTRADICTED if rejected_as == CONTRADICTED else DROPPED
    if status == Status.FAIL or citation == CONTRADICTS:
        return CONTRADICTED
    if citation == SUPPORTS:  # its source supports it and nothing credible contradicts it
        return CONFIRMED
    if status == Status.PASS:
        return RESOURCED
    if status == "pending":
        return PENDING
    if citation == UNVERIFIABLE:
        return UNVERIFIABLE
    return UNSUPPORTED


def sentence_mark(marks: Sequence[str]) -> str:
    """One sentence's mark from its claims' marks: the worst of them (a sentence is only
    as good as its weakest claim); a sentence with no claim is not marked ("")."""
    order = (CONTRADICTED, UNVERIFIABLE, UNSUPPORTED, DROPPED, PENDING, RESOURCED, CONFIRMED)
    for mark in order:
        if mark in marks:
            return mark
    return ""
