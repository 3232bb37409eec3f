"""The semantic check of a synthesized report: every sentence against the capsules it cites.

Seed 000 asks the report to be re-atomized and every factual sentence confirmed to map to
a passed claim, with unsupported bridge claims detected. The lexical check of
``research.pipeline.synthesize`` compares words; this one reads meaning. Each sentence of
the report's sections is a hypothesis; its premises are the approved texts (with their
allowed scope) of the capsules it cites. A sentence is read as its atomic propositions
(mining's ``split_coordination``); each must come from ONE cited capsule, so a sentence may
join two claims it cites but never bridge them into a third thing nobody verified.

- The entailment family (a cross-encoder, ``research.pipeline.verify.nli``) scores every
  (premise, proposition) pair. A proposition is entailed when, for one of the premises,
  entailment is the most likely label at or above ``settings.REPORT_CHECK_ENTAILMENT``:
  by default the lowest bar at which the shipped model's entailment calls are right 9
  times in 10 on the NLI pairs held back from its training (``manage.py
  bench_report_check`` measures it); a sentence is *entailed* when each of its
  propositions is.
- A sentence (or proposition) that is word for word the approved text of a capsule it
  cites is *identical*: it passes whatever the model says (a text entails itself), and
  its score is still recorded.
- Each LLM judge, when configured, also reads each sentence that is not identical against
  its cited capsules; the sentence passes only if every judge votes ``supports``.
- Every other sentence is *refused*: the synthesis removes it and names it.

Pure: capsules and sentences in, a :class:`ReportCheck` out; the caller chooses the
scorer and the judges (``from_settings``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from research.pipeline.claims.mine import split_coordination
from research.pipeline.verify.nli import CONTRADICTION, ENTAILMENT
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict
from research.providers.base import ProviderError

ENTAILED = "entailed"
IDENTICAL = "identical"
REFUSED = "refused"


class EntailmentScorer(Protocol):
    """A cross-encoder as ``research.pipeline.verify.nli`` loads it."""

    name: str

    def probs(self, pairs: list[tuple[str, str]]) -> NDArray[np.float32]: ...


class SentenceJudge(Protocol):
    """A verifier family that judges a claim against evidence (the LLM judges)."""

    family: str

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]: ...


@dataclass(frozen=True)
class Premise:
    """What a cited capsule lets the report say: its code and its approved, scoped text."""

    code: str
    text: str


@dataclass(frozen=True)
class SentenceCheck:
    section: str
    text: str
    claims: tuple[str, ...]  # the capsule codes the sentence cites
    outcome: str  # entailed, identical or refused
    entailment: float  # the best entailment probability over its premises
    contradiction: float  # the contradiction probability of the same pair
    judges: tuple[str, ...] = ()  # "family: verdict" of each LLM judge that read it
    reason: str = ""  # why it was refused

    @property
    def passed(self) -> bool:
        return self.outcome != REFUSED


@dataclass(frozen=True)
class ReportCheck:
    """What the semantic check did to one report: its judges and every sentence."""

    scorer: str  # the entailment family's model ("nli:shipped"), "" when not run
    bar: float = 0.0  # the entailment a proposition needed
    judges: tuple[str, ...] = ()  # LLM judge families that read the sentences
    sentences: tuple[SentenceCheck, ...] = field(default=())
    not_run: str = ""  # why the check did not run ("" when it did)

    @property
    def refused(self) -> list[SentenceCheck]:
        return [s for s in self.sentences if not s.passed]

    def count(self, outcome: str) -> int:
        return sum(1 for s in self.sentences if s.outcome == outcome)

    def summary(self) -> str:
        """One line for the report's method section."""
        if self.not_run:
            return f"Semantic check of the report's sentences: not run ({self.not_run})."
        judged_by = self.scorer + "".join(f" and {judge}" for judge in self.judges)
        return (
            f"Semantic check of the report's sentences ({judged_by}, entailment ≥ "
            f"{self.bar:.2f} against the capsules each cites): "
            f"{len(self.sentences)} judged; {self.count(ENTAILED)} entailed, "
            f"{self.count(IDENTICAL)} the approved text itself, "
            f"{self.count(REFUSED)} refused and removed."
        )


@dataclass(frozen=True)
class Hypothesis:
    """One report sentence to check, with the premises of the capsules it cites."""

    section: str
    text: str
    premises: tuple[Premise, ...]


@dataclass(frozen=True)
class _Atom:
    text: str
    entailment: float  # the best entailment over the premises
    contradiction: float  # the contradiction of that pair
    entailed: bool  # entailment is that pair's most likely label, at or above the bar
    identical: bool  # word for word a premise


def check_sentences(
    hypotheses: Sequence[Hypothesis],
    scorer: EntailmentScorer,
    bar: float,
    judges: Sequence[SentenceJudge] = (),
) -> ReportCheck:
    """Judge every hypothesis; the cross-encoder reads all pairs in one batch. ``bar``:
    the entailment probability a proposition needs (``settings.REPORT_CHECK_ENTAILMENT``)."""
    atoms = [split_coordination(h.text) or [h.text] for h in hypotheses]
    pairs = [
        (premise.text, atom)
        for hypothesis, parts in zip(hypotheses, atoms, strict=True)
        for atom in parts
        for premise in hypothesis.premises
    ]
    probs = scorer.probs(pairs) if pairs else np.zeros((0, 3), dtype=np.float32)
    checks, cursor = [], 0
    for hypothesis, parts in zip(hypotheses, atoms, strict=True):
        n = len(hypothesis.premises)
        read = []
        for atom in parts:
            read.append(_atom(atom, hypothesis.premises, probs[cursor : cursor + n], bar))
            cursor += n
        checks.append(_check(hypothesis, read, bar, judges))
    return ReportCheck(
        scorer=scorer.name,
        bar=bar,
        judges=tuple(judge.family for judge in judges),
        sentences=tuple(checks),
    )


def _atom(
    text: str,
    premises: Sequence[Premise],
    probs: NDArray[np.float32],
    bar: float,
) -> _Atom:
    identical = any(_same(text, p.text) for p in premises)
    if not len(probs):
        return _Atom(text, 0.0, 0.0, False, identical)
    best = int(probs[:, ENTAILMENT].argmax())
    entailment = float(probs[best, ENTAILMENT])
    entailed = bool(probs[best].argmax() == ENTAILMENT and entailment >= bar)
    return _Atom(text, entailment, float(probs[best, CONTRADICTION]), entailed, identical)


def _check(
    hypothesis: Hypothesis,
    atoms: list[_Atom],
    bar: float,
    judges: Sequence[SentenceJudge],
) -> SentenceCheck:
    """A sentence passes when each of its atomic propositions is one cited capsule's
    approved text or is entailed by one cited capsule (never by several read together:
    that is how a bridge claim nobody verified gets in)."""
    claims = tuple(p.code for p in hypothesis.premises)
    weakest = min(atoms, key=lambda a: (a.identical, a.entailment))
    scores = (weakest.entailment, weakest.contradiction)
    base = (hypothesis.section, hypothesis.text, claims)
    if not claims:
        return SentenceCheck(*base, REFUSED, 0.0, 0.0, reason="cites no approved claim")
    if any(_same(hypothesis.text, p.text) for p in hypothesis.premises):
        return SentenceCheck(*base, IDENTICAL, *scores)
    failed = [n for n, a in enumerate(atoms, 1) if not (a.identical or a.entailed)]
    if failed:
        # The reason names propositions by number: it is exported (Appendix "Post-synthesis
        # check"), and text no one approved never is; the sentence is kept beside it.
        named = "; ".join(
            f"proposition {n} of {len(atoms)} (entailment {atoms[n - 1].entailment:.2f}, "
            f"contradiction {atoms[n - 1].contradiction:.2f})"
            for n in failed
        )
        reason = f"no cited claim entails {named}; entailment needs ≥ {bar:.2f}"
        return SentenceCheck(*base, REFUSED, *scores, reason=reason)
    verdicts = tuple(_judge_verdict(judge, hypothesis) for judge in judges)
    dissent = [v for v in verdicts if not v.endswith(f": {VoteVerdict.SUPPORTS}")]
    if dissent:
        reason = f"entailed, but not supported by {'; '.join(dissent)}"
        return SentenceCheck(*base, REFUSED, *scores, verdicts, reason)
    return SentenceCheck(*base, ENTAILED, *scores, verdicts)


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).rstrip(".").casefold() == " ".join(b.split()).rstrip(".").casefold()


def _judge_verdict(judge: SentenceJudge, hypothesis: Hypothesis) -> str:
    """The judge's vote on the sentence over its cited capsules: ``supports`` when one
    capsule supports it (a provider error counts as no support, with the reason)."""
    claim = ClaimInput(claim_id="report-sentence", text=hypothesis.text)
    items = [
        EvidenceItem(evidence_id=p.code, text=p.text, fingerprint=p.code, source_key=p.code)
        for p in hypothesis.premises
    ]
    try:
        votes = judge.judge(claim, items)
    except ProviderError as exc:
        return f"{judge.family}: error ({exc})"
    verdicts = {vote.verdict for vote in votes}
    for verdict in (VoteVerdict.SUPPORTS, VoteVerdict.CONTRADICTS):
        if verdict in verdicts:
            return f"{judge.family}: {verdict}"
    return f"{judge.family}: {VoteVerdict.INSUFFICIENT}"


Check = Callable[[Sequence[Hypothesis]], ReportCheck]


def from_settings() -> Check:
    """The check the settings configure: ``REPORT_CHECK_MODEL`` (``shipped``, a folder or
    cross-encoder name, or ``off``), ``REPORT_CHECK_ENTAILMENT``, and the LLM judges when
    an LLM is configured. A configured model that is missing or corrupt raises
    ``NLIUnavailable`` naming the file: the build stops, it never skips the check."""
    from django.conf import settings

    from research.pipeline.verify.llm_judge import LLMJudge
    from research.pipeline.verify.nli import configured_spec, load_scorer

    spec = configured_spec(settings.REPORT_CHECK_MODEL)
    if spec is None:
        return lambda hypotheses: ReportCheck(scorer="", not_run="REPORT_CHECK_MODEL=off")
    scorer = load_scorer(spec)
    bar = settings.REPORT_CHECK_ENTAILMENT
    judges = LLMJudge.from_settings()
    return lambda hypotheses: check_sentences(hypotheses, scorer, bar, judges)
