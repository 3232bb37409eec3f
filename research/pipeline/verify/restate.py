"""Is a reviewer's narrowed wording a restatement of the claim it replaces?

Issue 26: a reviewer's cleanup of a PASS claim ("A narrative review states that …", a
``*`` bullet removed, "will not be" → "are not") was re-verified against the quote alone
and came back UNCERTAIN ("supported by learned, but not corroborated by align"), so every
cleanup became an override. The quote already supports the original claim; what has to
be judged is whether the new wording says the same thing. The configured judging
families judge it, in both directions, on the two wordings alone:

1. Markup is removed (:func:`plain`): Markdown's block markers (``*``, ``-``, ``+``,
   ``#``, ``>``, a numbered list's ``1.``) at the start, and its inline emphasis and code
   markers (``*``, ``_``, ``~``, `````) anywhere. These are the syntax of the format
   (CommonMark), not words of a field.
2. A reporting frame is set aside (:func:`reporting_frame`): "<who> <says> that <clause>",
   the text before the first complementizer "that" when it shares no content word with
   the original, states no negation and no number (a number in a name, "PEP 703", is no
   count). Only the clause after it is compared.
3. The families judge the original as the premise and the new wording as the hypothesis
   (nothing added: a broader scope or a different number is not entailed), then the other
   way round (nothing dropped: a qualifier removed is not entailed back). Each direction
   must reach the aggregation's PASS (every judging family that ran supports it, the
   quorum holds, no check family finds a conflict such as a negation flipped).

Pure over records; the caller supplies the verifier configuration.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from research.pipeline.language.direction import negated
from research.pipeline.language.lexicon import content_stems, words
from research.pipeline.language.quantities import quantities
from research.pipeline.text import passage_fingerprint
from research.pipeline.verify.records import ClaimInput, ClaimVerdict, EvidenceItem, Status

# Markdown block markers at the start of a line, and inline emphasis / code markers.
_BLOCK_MARKER = re.compile(r"^\s*(?:[*+\-#>]+|\d+[.)])\s+", re.MULTILINE)
_INLINE_MARKER = re.compile(r"[*_~`]+")
_COMPLEMENTIZER = re.compile(r"\bthat\s+", re.IGNORECASE)
# A number right after a capitalised content word is part of a name ("PEP 703", "ISO
# 27001", "Section 4.2"): it names the document a frame attributes the claim to. Any other
# number in a frame counts or measures something ("Two of 3 trials", "In 3 trials").
_NAMED_NUMBER = re.compile(r"\b(?P<word>[A-Z][A-Za-z]*)[ -]\d+(?:\.\d+)*\b")

# Judges a hypothesis claim against a premise text (the configured families, aggregated).
Judge = Callable[[ClaimInput, str], ClaimVerdict]


@dataclass(frozen=True)
class Restatement:
    """Whether ``narrowed`` says what ``original`` says, and why, in words."""

    holds: bool
    reason: str
    frame: str = ""  # the reporting frame set aside ("" when none)
    confidence: float = 0.0  # the weaker direction's verdict confidence
    forward: ClaimVerdict | None = None  # original ⊨ narrowed
    backward: ClaimVerdict | None = None  # narrowed ⊨ original


def plain(text: str) -> str:
    """The text without Markdown markup, whitespace collapsed."""
    text = _BLOCK_MARKER.sub("", text)
    text = _INLINE_MARKER.sub("", text)
    return " ".join(text.split())


def reporting_frame(original: str, narrowed: str) -> tuple[str, str]:
    """(frame, clause) when ``narrowed`` reports ``original`` through a frame, else ("", narrowed).

    The frame is the text before the first "that"; it must share no content word with the
    original (the proposition is all in the clause), state no negation ("It is not true
    that …") and no number but one that is part of a name ("PEP 703 states that …"), and
    leave a clause of at least one content word.
    """
    match = _COMPLEMENTIZER.search(narrowed)
    if match is None or match.start() == 0:
        return "", narrowed
    frame, clause = narrowed[: match.start()].strip(), narrowed[match.end() :].strip()
    if not content_stems(clause) or content_stems(frame) & content_stems(original):
        return "", narrowed
    if negated(frame) or quantities(_without_names(frame)) or not words(frame):
        return "", narrowed
    return frame, clause[0].upper() + clause[1:]


def _without_names(frame: str) -> str:
    """The frame with every numbered name ("PEP 703") taken out."""
    return _NAMED_NUMBER.sub(lambda m: " " if content_stems(m["word"]) else m[0], frame)


def restates(original: ClaimInput, narrowed: str, judge: Judge) -> Restatement:
    """Whether ``narrowed`` restates ``original`` (module docstring), judged by ``judge``."""
    before = plain(original.text)
    frame, after = reporting_frame(before, plain(narrowed))
    forward = judge(replace(original, text=after, fingerprint=""), before)
    backward = judge(replace(original, text=before, fingerprint=""), after)
    framed = f' (the reporting frame "{frame}" set aside)' if frame else ""
    if forward.status != Status.PASS:
        why = f"the original does not entail the new wording{framed}: {forward.rationale}"
        return Restatement(False, why, frame, 0.0, forward, backward)
    if backward.status != Status.PASS:
        why = f"the new wording drops part of the original{framed}: {backward.rationale}"
        return Restatement(False, why, frame, 0.0, forward, backward)
    why = f"the verifier families find the new wording and the original entail each other{framed}"
    confidence = min(forward.confidence, backward.confidence)
    return Restatement(True, why, frame, confidence, forward, backward)


def premise_item(text: str) -> EvidenceItem:
    """A wording as the passage a hypothesis is judged against."""
    return EvidenceItem(evidence_id="wording", text=text, fingerprint=passage_fingerprint(text))
