"""Conservative aggregation of admitted votes into PASS / FAIL / UNCERTAIN.

1. No admitted vote ⇒ UNCERTAIN, never PASS.
2. A credible contradiction (an admitted ``contradicts`` vote scoring at least
   ``min_contradict_score``) outranks any amount of support ⇒ FAIL.
3. PASS needs an admitted ``supports`` vote from a semantic verifier family with a
   verbatim quote, on a passage no verifier contradicts and no rule found overstated,
   and then the claim type's policy: numerical claims need the exact number and unit,
   current-state claims a recent snapshot, comparative claims evidence on both sides,
   causal claims more than correlation, triangulated claims independent sources.
4. Otherwise UNCERTAIN. The rationale says why, in words.

A ``contradicts`` vote that quotes the very sentence the claim was mined from (an
anchor's cited quote) with the same negation and direction as the claim is not
credible: a sentence cannot contradict its own restatement. Such votes are not counted
as contradictions, and the rationale says how many were set aside. When negation or
direction differ (a miner that lost a "not"), the contradiction stands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from research.pipeline.text import (
    antonym_clash,
    content_stems,
    coverage,
    direction,
    negated,
    normalize_text,
    quantities,
    years,
)
from research.pipeline.verify.records import (
    ClaimInput,
    ClaimVerdict,
    DiscardedVote,
    EvidenceItem,
    Flag,
    PoolName,
    RejectedEvidence,
    Status,
    Vote,
    VoteVerdict,
)

SAFETY_TERMS = re.compile(
    r"\b(dose|dosage|overdose|suicid\w*|self-harm|pregnan\w*|vaccin\w*|child(?:ren)?|"
    r"infant\w*|weapon\w*|explosive\w*|poison\w*|lethal|toxic\w*|chemotherap\w*|"
    r"surgery|medication|drug|contraindicat\w*|emergency)\b",
    re.IGNORECASE,
)
CORRELATIONAL = re.compile(
    r"\b(associat\w*|correlat\w*|linked to|link between|related to|relationship|odds ratio|"
    r"risk factor|observational|cohort|cross-sectional)\b",
    re.IGNORECASE,
)
CAUSAL_EVIDENCE = re.compile(
    r"\b(caus\w*|led to|leads to|lead to|result(?:s|ed)? in|induc\w*|randomi[sz]ed|trial|"
    r"knock(?:out|down|ed out)|experiment\w*|intervention|mendelian randomi[sz]ation|"
    r"due to|mediat\w*|abolish\w*|rescu\w*)\b",
    re.IGNORECASE,
)
COMPARISON_SPLIT = re.compile(
    r"\b(?:than|compared (?:with|to)|versus|vs\.?|relative to|in contrast to)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class AggregateConfig:
    pass_families: frozenset[str] = frozenset({"learned", "nli", "llm"})
    min_support_score: float = 0.5
    min_contradict_score: float = 0.3  # each verifier applies its own calibrated threshold
    # A contradiction must quote a sentence about the claim: at least this share of the
    # claim's content stems. Below it the passage is about something else.
    min_contradict_coverage: float = 0.25
    recent_days: int = 365
    min_independent: int = 2
    low_quality_types: frozenset[str] = frozenset({"news", "other"})
    as_of: date | None = None


@dataclass
class _Tally:
    support: dict[str, list[Vote]] = field(default_factory=dict)
    contradict: dict[str, list[Vote]] = field(default_factory=dict)
    overstated: set[str] = field(default_factory=set)
    scope_gap: set[str] = field(default_factory=set)
    weak_support: dict[str, list[Vote]] = field(default_factory=dict)
    self_quoted: list[Vote] = field(default_factory=list)
    off_topic: list[Vote] = field(default_factory=list)


def aggregate(
    claim: ClaimInput,
    items: Sequence[EvidenceItem],
    votes: Sequence[Vote],
    *,
    discarded: Sequence[DiscardedVote] = (),
    rejected: Sequence[RejectedEvidence] = (),
    notes: dict[str, str] | None = None,
    config: AggregateConfig | None = None,
) -> ClaimVerdict:
    cfg = config or AggregateConfig()
    by_id = {item.evidence_id: item for item in items}
    sources = _source_sentences(claim, items)
    tally = _tally(votes, cfg, claim.text, sources)
    verdict = ClaimVerdict(
        claim_id=claim.claim_id,
        claim_fingerprint=claim.fingerprint,
        status=Status.UNCERTAIN,
        rationale="",
        confidence=0.0,
        votes=list(votes),
        discarded=list(discarded),
        rejected_evidence=list(rejected),
        notes=dict(notes or {}),
    )
    _relations(verdict, items, votes, tally)
    support_items = [by_id[i] for i in tally.support if i not in tally.contradict]
    blocked = tally.overstated | tally.scope_gap
    support_items = [i for i in support_items if i.evidence_id not in blocked]
    verdict.independent_sources = independent_count(support_items)
    if not votes:
        _set(verdict, Status.UNCERTAIN, 0.0, "no admitted verifier vote; nothing was judged")
    elif tally.contradict:
        _fail(verdict, tally, by_id)
    elif support_items:
        _pass_or_hold(verdict, claim, support_items, tally, cfg)
    else:
        _set(verdict, Status.UNCERTAIN, _top(votes), _no_support_reason(tally, items))
    if tally.self_quoted:
        verdict.rationale += (
            f" Not counted: {len(tally.self_quoted)} contradiction vote(s) that quote the "
            "sentence the claim was mined from, with the same negation and direction."
        )
    if tally.off_topic:
        verdict.rationale += (
            f" Not counted: {len(tally.off_topic)} contradiction vote(s) whose quote shares "
            f"less than {cfg.min_contradict_coverage:.0%} of the claim's content words."
        )
    _flags(verdict, claim, items, tally, cfg)
    return verdict


def _bare(text: str) -> str:
    return normalize_text(text).strip(" .;:,")


def _source_sentences(claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[str]:
    """The claim's anchor sentences that state it with its own negation and direction."""
    out = []
    for item in items:
        quote = item.cited_quote
        if (
            quote
            and negated(quote) == negated(claim.text)
            and direction(quote) * direction(claim.text) >= 0
            and not antonym_clash(claim.text, quote)
        ):
            out.append(_bare(quote))
    return out


def _restates_source(vote: Vote, sources: Sequence[str]) -> bool:
    quote = _bare(vote.quote)
    return bool(quote) and any(quote in s or s in quote for s in sources)


def _tally(
    votes: Sequence[Vote], cfg: AggregateConfig, claim_text: str, sources: Sequence[str] = ()
) -> _Tally:
    tally = _Tally()
    for vote in votes:
        if vote.verdict == VoteVerdict.CONTRADICTS and vote.score >= cfg.min_contradict_score:
            if _restates_source(vote, sources):
                tally.self_quoted.append(vote)
            elif coverage(claim_text, vote.quote) < cfg.min_contradict_coverage:
                tally.off_topic.append(vote)
            else:
                tally.contradict.setdefault(vote.evidence_id, []).append(vote)
        elif vote.verdict == VoteVerdict.SUPPORTS and vote.score >= cfg.min_support_score:
            bucket = tally.support if vote.family in cfg.pass_families else tally.weak_support
            bucket.setdefault(vote.evidence_id, []).append(vote)
        if Flag.OVERSTATEMENT.value in vote.flags:
            tally.overstated.add(vote.evidence_id)
        if Flag.SCOPE_GAP.value in vote.flags:
            tally.scope_gap.add(vote.evidence_id)
    return tally


def _relations(
    verdict: ClaimVerdict, items: Sequence[EvidenceItem], votes: Sequence[Vote], tally: _Tally
) -> None:
    for item in items:
        eid = item.evidence_id
        if eid in tally.contradict:
            relation, chosen = "contradicts", tally.contradict[eid]
        elif eid in tally.support:
            relation, chosen = "supports", tally.support[eid]
        else:
            relation, chosen = "insufficient", [v for v in votes if v.evidence_id == eid]
        verdict.relations[eid] = relation
        quoted = [v for v in sorted(chosen, key=lambda v: -v.score) if v.quote]
        if quoted:
            verdict.quotes[eid] = quoted[0].quote
    verdict.support_ids = [i for i, r in verdict.relations.items() if r == "supports"]
    verdict.refute_ids = [i for i, r in verdict.relations.items() if r == "contradicts"]


def independent_count(items: Sequence[EvidenceItem]) -> int:
    """Sources count once per near-duplicate cluster and once per publisher."""
    parent = list(range(len(items)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, int] = {}
    for i, item in enumerate(items):
        keys = [f"k:{item.independence_key}"]
        if item.publisher:
            keys.append(f"p:{item.publisher.strip().lower()}")
        for key in keys:
            if key in first:
                parent[find(i)] = find(first[key])
            else:
                first[key] = i
    return len({find(i) for i in range(len(items))})


def _set(verdict: ClaimVerdict, status: Status, confidence: float, rationale: str) -> None:
    verdict.status = status
    verdict.confidence = round(float(confidence), 4)
    verdict.rationale = rationale


def _top(votes: Sequence[Vote]) -> float:
    return max((v.score for v in votes), default=0.0)


def _cite(vote: Vote, limit: int = 160) -> str:
    quote = vote.quote if len(vote.quote) <= limit else vote.quote[: limit - 1] + "…"
    return f'{vote.verifier} ({vote.score:.2f}) on evidence {vote.evidence_id}: "{quote}"'


def _fail(verdict: ClaimVerdict, tally: _Tally, by_id: dict[str, EvidenceItem]) -> None:
    strongest = max((v for vs in tally.contradict.values() for v in vs), key=lambda v: v.score)
    text = (
        f"FAIL: {len(tally.contradict)} passage(s) contradict the claim, which outranks "
        f"any support. Strongest: {_cite(strongest)} — {strongest.rationale}"
    )
    supported = [i for i in tally.support if i not in tally.contradict]
    if supported:
        text += f" ({len(supported)} other passage(s) support it: conflicting evidence.)"
    _set(verdict, Status.FAIL, strongest.score, text)


def _pass_or_hold(
    verdict: ClaimVerdict,
    claim: ClaimInput,
    support_items: list[EvidenceItem],
    tally: _Tally,
    cfg: AggregateConfig,
) -> None:
    best = max(
        (v for i in support_items for v in tally.support[i.evidence_id]), key=lambda v: v.score
    )
    problem = policy_problem(claim, support_items, tally, cfg)
    if problem:
        _set(verdict, Status.UNCERTAIN, best.score, f"UNCERTAIN: support found but {problem}.")
        return
    _set(
        verdict,
        Status.PASS,
        best.score,
        f"PASS: {len(support_items)} passage(s) from {verdict.independent_sources} "
        f"independent source(s) support the claim and no admitted vote contradicts it. "
        f"Best: {_cite(best)}",
    )


def policy_problem(
    claim: ClaimInput, items: list[EvidenceItem], tally: _Tally, cfg: AggregateConfig
) -> str:
    """Why the claim type's evidence requirement is not met (empty when it is)."""
    passage = " ".join(i.text for i in items)
    quotes = " ".join(v.quote for i in items for v in tally.support[i.evidence_id])
    kind = claim.claim_type
    if kind == "numerical" or quantities(claim.text):
        missing = [
            q.text
            for q in quantities(claim.text)
            if not any(q.value == f.value and q.unit == f.unit for f in quantities(passage))
        ]
        if missing:
            return f"the evidence does not state {', '.join(missing)} with the same unit"
    if kind == "temporal" and not set(years(claim.text)) <= set(years(passage)):
        return "the evidence does not cover the claim's dates"
    if (kind == "current-state" or claim.time_sensitive) and not _recent(items, cfg):
        return f"a current-state claim needs a snapshot from the last {cfg.recent_days} days"
    if kind == "comparative":
        sides = [s for s in COMPARISON_SPLIT.split(claim.text, maxsplit=1) if s.strip()]
        if len(sides) == 2 and min(coverage(content_stems(s), passage) for s in sides) < 0.5:
            return "a comparative claim needs evidence about both sides"
    if kind == "causal" and CORRELATIONAL.search(quotes) and not CAUSAL_EVIDENCE.search(quotes):
        return "the evidence shows association, and a causal claim needs more than correlation"
    if claim.needs_triangulation and independent_count(items) < cfg.min_independent:
        return f"the claim needs {cfg.min_independent} independent sources"
    return ""


def _recent(items: list[EvidenceItem], cfg: AggregateConfig) -> bool:
    as_of = cfg.as_of or date.today()
    for item in items:
        for stamp in (item.fetched_at, item.published):
            try:
                when = date.fromisoformat(stamp[:10])
            except ValueError:
                continue
            if (as_of - when).days <= cfg.recent_days:
                return True
    return False


def _no_support_reason(tally: _Tally, items: Sequence[EvidenceItem]) -> str:
    if set(tally.support) & tally.scope_gap:
        return (
            "UNCERTAIN: the supporting passages do not cover the claim's scope (a named "
            "entity or date of the claim is missing from them)"
        )
    if tally.overstated:
        return (
            "UNCERTAIN: the evidence is hedged where the claim is stated as certain "
            "(overstatement); narrow the claim"
        )
    if tally.weak_support:
        return (
            "UNCERTAIN: only lexical rules found the claim's terms; no semantic verifier "
            "judged the evidence to entail it"
        )
    return f"UNCERTAIN: none of {len(items)} admitted passage(s) states the claim"


def _flags(
    verdict: ClaimVerdict,
    claim: ClaimInput,
    items: Sequence[EvidenceItem],
    tally: _Tally,
    cfg: AggregateConfig,
) -> None:
    flags: list[str] = []
    any_support = set(tally.support) | set(tally.weak_support)
    if claim.high_impact:
        flags.append(Flag.HIGH_IMPACT)
    if tally.contradict and any_support:
        flags.append(Flag.CONFLICTING)
    if verdict.status == Status.PASS and verdict.independent_sources < 2:
        flags.append(Flag.SINGLE_SOURCE)
    support = [i for i in items if i.evidence_id in verdict.support_ids]
    if verdict.status == Status.PASS and all(
        i.source_type in cfg.low_quality_types for i in support
    ):
        flags.append(Flag.LOW_QUALITY)
    if verdict.status == Status.UNCERTAIN:
        flags.append(Flag.UNCERTAIN)
    if SAFETY_TERMS.search(claim.text):
        flags.append(Flag.SAFETY)
    if not any(i.pool == PoolName.REFUTE for i in items):
        flags.append(Flag.NO_REFUTE_POOL)
    if tally.overstated:
        flags.append(Flag.OVERSTATEMENT)
    verdict.flags = [str(f) for f in flags]
