"""Conservative aggregation of admitted votes into PASS / FAIL / UNCERTAIN / UNVERIFIABLE.

Families have roles. *Judging* families (learned, coverage, NLI, each LLM judge) vote on
whether a passage states the claim; *check* families (``rules``) only contradict or
block (overstatement, scope gap) and never form a quorum. Votes of *shadow* families are
kept apart: they are stored and shown, and :attr:`ClaimVerdict.shadow_status` says what
the verdict would have been with them, but they never change the verdict.

1. No valid vote from a judging family ⇒ UNVERIFIABLE (never PASS, never silently
   UNCERTAIN): nothing was judged, or every family said the claim cannot be checked.
2. A *credible* contradiction outranks any amount of support ⇒ FAIL. Credible means
   (:func:`credibility`): from a source other than the claim's own anchor passage, on a
   passage no judging family finds to state the claim, quoting a sentence about the same
   thing (the claim's subject and object terms), with an explicit conflict a reviewer can
   see (negation, direction, number, antonym, "no effect"), and either a calibrated
   confidence at or above ``min_contradict_score`` or *two families* finding the conflict:
   the lexical check (``rules``) and a judging family that itself votes ``contradicts``
   on the same subject and outcome there (the quorum idea of seed 003, applied to
   contradictions: two families with different failure modes agreeing). A check
   family's contradiction alone (its score is not calibrated) is never credible.
   A contradiction missing any of these is a
   *possible contradiction*: the claim cannot PASS (it is UNCERTAIN, as the issue's
   "everything weaker is UNCERTAIN" says — support elsewhere does not outvote an on-topic
   conflict nobody has weighed yet), the passage is shown with its score, and the claim is
   flagged — but it does not FAIL. A quote about something else, or one on a passage a
   judging family finds to state the claim, or one on the claim's own source (the claim
   restates it), is set aside and blocks nothing.
3. PASS needs a quorum (seed 003): at least ``quorum`` distinct judging families support
   the claim with admitted verbatim quotes, *every* judging family that ran supports it
   (one that abstains, says insufficient or unverifiable, or was configured and failed,
   blocks PASS: "not corroborated by …"), on passages nothing contradicts or blocks, and
   the claim type's policy holds (numbers and units, dates, recency, both sides of a
   comparison, more than correlation for causal claims, independent sources).
4. Otherwise UNCERTAIN. The rationale says why, in words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from research.pipeline.claims.roles import (
    AIM,
    BACKGROUND,
    BOILERPLATE,
    DESIGN,
    METHOD,
    QUESTION,
    classify_sentences,
)
from research.pipeline.language.direction import (
    NULL_EFFECT,
    RELATION_VERB,
    antonym_clash,
    direction,
    negated,
)
from research.pipeline.language.lexicon import content_stems, coverage
from research.pipeline.language.quantities import quantities, years
from research.pipeline.language.sentences import full_stop, split_sentences
from research.pipeline.language.verdict_cues import (
    CAUSAL_EVIDENCE,
    COMPARISON_SPLIT,
    CORRELATIONAL,
    SAFETY_TERMS,
)
from research.pipeline.verify.features import polarity
from research.pipeline.verify.records import (
    ClaimInput,
    ClaimVerdict,
    DiscardedVote,
    EvidenceItem,
    Flag,
    RejectedEvidence,
    Status,
    Vote,
    VoteVerdict,
)

# The lexical predicates on the verdict path that an ablation can switch off.
PREDICATES = (
    "states_no_finding",
    "same_subject_and_object",
    "qualifier_clash",
    "conflict_cue",
    "contradict_coverage",
    "claim_type_policy",
)


@dataclass(frozen=True)
class AggregateConfig:
    quorum: int = 2  # distinct judging families that must support (per-plan gate setting)
    check_families: frozenset[str] = frozenset({"rules"})
    min_support_score: float = 0.5
    # A contradiction is credible at this calibrated confidence or above (each family
    # votes ``contradicts`` at its own threshold; below this it is a possible one).
    min_contradict_score: float = 0.5
    # The quote of a contradiction must share this share of the claim's content stems;
    # below it the passage is about something else and the vote is set aside.
    min_contradict_coverage: float = 0.5
    # A judging family's contradiction below ``min_contradict_score`` is still credible
    # when the check family independently finds an explicit conflict on the same passage
    # (two families agree); off: only the calibrated confidence counts.
    corroborated_contradictions: bool = True
    recent_days: int = 365
    min_independent: int = 2
    low_quality_types: frozenset[str] = frozenset({"news", "other"})
    as_of: date | None = None
    # A contradiction on the claim's own source (the passage it was mined from, or another
    # of that source's passages) is set aside: the claim restates that sentence, so the
    # vote is the verifier misreading it, and it must not hold the claim UNCERTAIN
    # (issue 26). True keeps it a possible contradiction: re-verifying a reviewer's new
    # wording, which was not mined from that passage.
    own_source_contradicts: bool = False
    # Lexical predicates switched off, for the ablation of ``bench_verification
    # --ablation`` (names in ``PREDICATES``); the product runs with all of them.
    without: frozenset[str] = frozenset()

    def uses(self, predicate: str) -> bool:
        return predicate not in self.without

    def judging(self, family: str) -> bool:
        return family not in self.check_families


@dataclass
class _Tally:
    support: dict[str, dict[str, Vote]] = field(default_factory=dict)  # eid -> family -> vote
    contradict: dict[str, list[Vote]] = field(default_factory=dict)  # credible only
    possible: dict[str, tuple[Vote, str]] = field(default_factory=dict)  # eid -> vote, why
    set_aside: list[tuple[Vote, str]] = field(default_factory=list)  # not a contradiction
    overstated: set[str] = field(default_factory=set)
    scope_gap: set[str] = field(default_factory=set)
    no_finding: list[tuple[Vote, str]] = field(default_factory=list)  # support not counted
    ran: set[str] = field(default_factory=set)  # judging families with a valid vote
    abstained: dict[str, str] = field(default_factory=dict)  # family -> its best non-support


def aggregate(
    claim: ClaimInput,
    items: Sequence[EvidenceItem],
    votes: Sequence[Vote],
    *,
    discarded: Sequence[DiscardedVote] = (),
    rejected: Sequence[RejectedEvidence] = (),
    notes: dict[str, str] | None = None,
    unavailable: dict[str, str] | None = None,
    config: AggregateConfig | None = None,
) -> ClaimVerdict:
    """The counted verdict; with shadow votes, also what they would have made of it."""
    cfg = config or AggregateConfig()
    counted = [v for v in votes if not v.shadow]
    verdict = _decide(claim, items, counted, cfg, dict(unavailable or {}))
    verdict.votes = list(votes)
    verdict.discarded = list(discarded)
    verdict.rejected_evidence = list(rejected)
    verdict.notes = dict(notes or {})
    if len(counted) < len(votes):
        everyone = [replace(v, shadow=False) for v in votes]
        verdict.shadow_status = _decide(claim, items, everyone, cfg, dict(unavailable or {})).status
    return verdict


def _decide(
    claim: ClaimInput,
    items: Sequence[EvidenceItem],
    votes: Sequence[Vote],
    cfg: AggregateConfig,
    unavailable: dict[str, str],
) -> ClaimVerdict:
    by_id = {item.evidence_id: item for item in items}
    tally = _tally(claim, by_id, votes, cfg)
    verdict = ClaimVerdict(
        claim_id=claim.claim_id,
        claim_fingerprint=claim.fingerprint,
        status=Status.UNCERTAIN,
        rationale="",
        confidence=0.0,
        unavailable=unavailable,
        quorum=cfg.quorum,
    )
    _relations(verdict, items, votes, tally)
    verdict.possible_contradictions = {eid: why for eid, (_, why) in tally.possible.items()}
    if tally.contradict:
        _fail(verdict, claim, tally, anchored=any(item.anchor for item in items))
    elif not tally.ran:
        _set(verdict, Status.UNVERIFIABLE, 0.0, _unverifiable_reason(items, votes, unavailable))
    else:
        _pass_or_hold(verdict, claim, by_id, tally, cfg)
    _notes_on_set_aside(verdict, tally)
    _flags(verdict, claim, items, tally, cfg)
    return verdict


# --- tally ----------------------------------------------------------------------------


def _tally(
    claim: ClaimInput, by_id: dict[str, EvidenceItem], votes: Sequence[Vote], cfg: AggregateConfig
) -> _Tally:
    tally = _Tally()
    for vote in votes:
        judging = cfg.judging(vote.family)
        if judging and vote.verdict in (
            VoteVerdict.SUPPORTS,
            VoteVerdict.CONTRADICTS,
            VoteVerdict.INSUFFICIENT,
        ):
            tally.ran.add(vote.family)
        if Flag.OVERSTATEMENT.value in vote.flags:
            tally.overstated.add(vote.evidence_id)
        if Flag.SCOPE_GAP.value in vote.flags:
            tally.scope_gap.add(vote.evidence_id)
        if judging and vote.verdict == VoteVerdict.SUPPORTS and vote.score >= cfg.min_support_score:
            why = states_no_finding(vote.quote) if cfg.uses("states_no_finding") else ""
            if why:
                tally.no_finding.append((vote, why))
            else:
                tally.support.setdefault(vote.evidence_id, {}).setdefault(vote.family, vote)
    supported = set(tally.support)
    anchor_sources = {i.source_key or i.evidence_id for i in by_id.values() if i.anchor}
    # Passages a judging family contradicts on a quote about the claim's subject and
    # outcome: only these can corroborate a check family's (uncalibrated) contradiction.
    # With ``corroborated_contradictions`` the judging family's own vote is enough (two
    # families agree); without, it must also reach the credible calibrated confidence.
    judged = {
        v.evidence_id
        for v in votes
        if v.verdict == VoteVerdict.CONTRADICTS
        and cfg.judging(v.family)
        and (cfg.corroborated_contradictions or v.score >= cfg.min_contradict_score)
        and (
            not cfg.uses("same_subject_and_object") or same_subject_and_object(claim.text, v.quote)
        )
    }
    readings: list[tuple[Vote, str, bool]] = []
    for vote in votes:
        if vote.verdict != VoteVerdict.CONTRADICTS:
            continue
        why, flagged = credibility(
            claim, vote, by_id[vote.evidence_id], supported, anchor_sources, cfg
        )
        if not why and not cfg.judging(vote.family) and vote.evidence_id not in judged:
            why, flagged = (
                "a lexical check alone (no judging family contradicts the same subject and "
                "outcome there)",
                True,
            )
        readings.append((vote, why, flagged))
    # Two families agree: the check family's explicit conflict is credible on a passage
    # a judging family contradicts, and that judging vote is credible with it.
    confirmed = {
        vote.evidence_id for vote, why, _ in readings if not why and not cfg.judging(vote.family)
    }
    for vote, why, flagged in readings:
        if why.startswith(LOW_CONFIDENCE) and vote.evidence_id in confirmed:
            why = ""
        if not why:
            tally.contradict.setdefault(vote.evidence_id, []).append(vote)
        elif flagged:
            held = tally.possible.get(vote.evidence_id)
            if held is None or vote.score > held[0].score:
                tally.possible[vote.evidence_id] = (vote, why)
        else:
            tally.set_aside.append((vote, why))
    return tally


# What a sentence is when it states no finding: it cannot be the quote that supports one.
# (Background comes only from a structure label: the role model's background reading is a
# statement, see research.pipeline.claims.roles.)
_NO_FINDING = {
    AIM: "the study's aim",
    QUESTION: "a question",
    METHOD: "how the study was done",
    DESIGN: "the study's design",
    BACKGROUND: "background",
    BOILERPLATE: "boilerplate",
}


def states_no_finding(quote: str) -> str:
    """Why ``quote`` cannot support a claim: each of its sentences states an aim, a question,
    a method, a design, background under its label or boilerplate (read as mining reads a candidate,
    :func:`research.pipeline.claims.roles.classify_sentence`): "OBJECTIVE We aimed to
    establish the dietary requirement …" says what a study set out to find, not that it is
    so. '' when a sentence of it states a finding (or is a clause mining would call a
    fragment: a verifier's window may start mid-sentence)."""
    kinds = []
    spans = split_sentences(quote) or [(0, len(quote))]
    for role in (r.role for r in classify_sentences([quote[a:b] for a, b in spans])):
        if role not in _NO_FINDING:
            return ""
        kinds.append(_NO_FINDING[role])
    return "its quote states " + " and ".join(dict.fromkeys(kinds)) + ", not a finding"


def credibility(
    claim: ClaimInput,
    vote: Vote,
    item: EvidenceItem,
    supported: set[str],
    anchor_sources: set[str],
    cfg: AggregateConfig,
) -> tuple[str, bool]:
    """("", _) for a credible contradiction; else (why not, whether to flag it possible).

    Set aside without a flag: a passage a judging family finds to state the claim, a
    quote about something else, and the claim's own source (unless
    ``own_source_contradicts``). Flagged as a possible contradiction: everything else short
    of credible, a quote that states no finding of its source (an aim, a method, a title,
    background) among it.
    """
    if item.evidence_id in supported:
        return "the same passage states the claim (a judging family supports it there)", False
    if cfg.uses("contradict_coverage") and (
        coverage(claim.text, vote.quote) < cfg.min_contradict_coverage
    ):
        return (
            f"its quote shares less than {cfg.min_contradict_coverage:.0%} of the claim's "
            "content words (about something else)",
            False,
        )
    own_source = item.anchor or (item.source_key or item.evidence_id) in anchor_sources
    if own_source and not cfg.own_source_contradicts:
        return "it is the claim's own source (the passage it was mined from)", False
    unfounded = states_no_finding(vote.quote) if cfg.uses("states_no_finding") else ""
    if unfounded:  # an aim, a method, a title, what is not known: shown, never a FAIL
        return unfounded, True
    if own_source:
        return "it is the claim's own source (the passage it was mined from)", True
    if cfg.uses("same_subject_and_object") and not same_subject_and_object(claim.text, vote.quote):
        return "the quote does not name both the claim's subject and its outcome", True
    if cfg.uses("qualifier_clash") and qualifier_clash(claim.text, vote.quote):
        return "it is about another group (with / without the same qualifier)", True
    cue = conflict_cue(claim.text, vote.quote) if cfg.uses("conflict_cue") else "any"
    if not cue:
        return "no explicit conflict (negation, direction, number, antonym) in the quote", True
    if vote.score < cfg.min_contradict_score:
        return (
            f"{LOW_CONFIDENCE} {vote.score:.2f} is below the credible level "
            f"{cfg.min_contradict_score:.2f}",
            True,
        )
    return "", False


LOW_CONFIDENCE = "confidence"


_WITH = re.compile(r"\b(with|without)\b((?:\s+[\w\-]+){1,4})", re.IGNORECASE)


def qualifier_clash(claim: str, quote: str) -> bool:
    """ "firms without export licences" against "firms with foreign owners and export
    licences": another population, so the negation word is a qualifier,
    not a conflict about the same group. Each "with"/"without" scopes its next 4 words."""

    def marks(text: str) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {"with": set(), "without": set()}
        for m in _WITH.finditer(text):
            found[m.group(1).lower()] |= content_stems(m.group(2))
        return found

    a, b = marks(claim), marks(quote)
    return bool(a["without"] & b["with"] - b["without"]) or bool(
        a["with"] & b["without"] - b["with"]
    )


def conflict_cue(claim: str, quote: str) -> str:
    """The explicit conflict between claim and quote a reviewer can check, or ""."""
    if negated(claim) != negated(quote):
        return "negation"
    if polarity(claim) * polarity(quote) < 0:
        return "direction"
    if antonym_clash(claim, quote):
        return "antonym"
    if direction(claim) != 0 and not negated(claim) and NULL_EFFECT.search(quote):
        return "no effect"
    found = quantities(quote)
    for q in quantities(claim):
        same_unit = [f for f in found if q.unit and f.unit == q.unit]
        if same_unit and not any(f.value == q.value for f in same_unit):
            return "number"
    return ""


def same_subject_and_object(claim: str, quote: str, share: float = 0.5) -> bool:
    """The quote states at least ``share`` of each side of the claim's relation verb.

    "Tutoring reduces absences in older pupils": subject {tutor}, object {absenc, older,
    pupil}; a quote about tutoring and grades in an older cohort has one object word
    of three, so it is not about the same finding. A claim without a relation verb needs
    ``share`` of all its content words.
    """
    quoted = content_stems(quote)
    match = RELATION_VERB.search(claim)
    if match is None:
        return coverage(claim, quoted) >= share
    subject = content_stems(claim[: match.start()])
    obj = content_stems(claim[match.end() :])
    if not subject or not obj:
        return coverage(claim, quoted) >= share
    return coverage(subject, quoted) >= share and coverage(obj, quoted) >= share


def _relations(
    verdict: ClaimVerdict, items: Sequence[EvidenceItem], votes: Sequence[Vote], tally: _Tally
) -> None:
    for item in items:
        eid = item.evidence_id
        on_item = [v for v in votes if v.evidence_id == eid]
        if eid in tally.contradict:
            relation, chosen = "contradicts", tally.contradict[eid]
        elif eid in tally.support:
            relation, chosen = "supports", list(tally.support[eid].values())
        elif eid in tally.possible:
            relation, chosen = "possible-contradiction", [tally.possible[eid][0]]
        elif on_item and all(v.verdict == VoteVerdict.UNVERIFIABLE for v in on_item):
            relation, chosen = "unverifiable", on_item
        else:
            relation, chosen = "insufficient", on_item
        verdict.relations[eid] = relation
        quoted = [v for v in sorted(chosen, key=lambda v: -v.score) if v.quote]
        if quoted:
            verdict.quotes[eid] = quoted[0].quote
    verdict.support_ids = [i for i, r in verdict.relations.items() if r == "supports"]
    verdict.refute_ids = [i for i, r in verdict.relations.items() if r == "contradicts"]


# --- verdicts -------------------------------------------------------------------------


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


def _cite(vote: Vote, limit: int = 160) -> str:
    quote = vote.quote if len(vote.quote) <= limit else vote.quote[: limit - 1] + "…"
    return f'{vote.verifier} ({vote.score:.2f}) on evidence {vote.evidence_id}: "{quote}"'


def _fail(verdict: ClaimVerdict, claim: ClaimInput, tally: _Tally, *, anchored: bool) -> None:
    """``anchored``: the claim has its own source among the items (a mined claim); an
    audited report's claim has none, so its contradiction is not "from another source"."""
    strongest = max((v for vs in tally.contradict.values() for v in vs), key=lambda v: v.score)
    where = " from another source" if anchored else ""
    text = (
        f"FAIL: {len(tally.contradict)} passage(s){where} credibly contradict "
        f"the claim ({conflict_cue(claim.text, strongest.quote)} conflict on the same "
        f"subject and outcome), which outranks any support. "
        f"Strongest: {_cite(strongest)} — {strongest.rationale}"
    )
    supported = [i for i in tally.support if i not in tally.contradict]
    if supported:
        text += f" ({len(supported)} other passage(s) support it: conflicting evidence.)"
    _set(verdict, Status.FAIL, strongest.score, text)


def _unverifiable_reason(
    items: Sequence[EvidenceItem], votes: Sequence[Vote], unavailable: dict[str, str]
) -> str:
    if not items:
        return "UNVERIFIABLE: no evidence passage was admitted, so nothing could be judged"
    said = sorted({v.family for v in votes if v.verdict == VoteVerdict.UNVERIFIABLE})
    parts = ["UNVERIFIABLE: no judging verifier family gave a valid vote"]
    if said:
        parts.append(f"({', '.join(said)}: the claim cannot be checked with this material)")
    if unavailable:
        parts.append("; unavailable: " + "; ".join(f"{k} ({v})" for k, v in unavailable.items()))
    return " ".join(parts)


def _pass_or_hold(
    verdict: ClaimVerdict,
    claim: ClaimInput,
    by_id: dict[str, EvidenceItem],
    tally: _Tally,
    cfg: AggregateConfig,
) -> None:
    blocked = tally.overstated | tally.scope_gap | set(tally.possible)
    usable = {eid: fams for eid, fams in tally.support.items() if eid not in blocked}
    supporters = {family for fams in usable.values() for family in fams}
    support_items = [by_id[eid] for eid in usable]
    verdict.independent_sources = independent_count(support_items)
    if not usable:
        top = max((v.score for fams in tally.support.values() for v in fams.values()), default=0.0)
        _set(verdict, Status.UNCERTAIN, top, _no_support_reason(tally, by_id))
        return
    best = max((v for fams in usable.values() for v in fams.values()), key=lambda v: v.score)
    if tally.possible:
        eid, (vote, why) = max(tally.possible.items(), key=lambda kv: kv[1][0].score)
        _set(
            verdict,
            Status.UNCERTAIN,
            best.score,
            f"UNCERTAIN: possible contradiction, not credible enough to FAIL ({why}), "
            f"but it blocks PASS until a reviewer weighs it: {_cite(vote)}. Supported by "
            f"{', '.join(sorted(supporters))} on {len(usable)} other passage(s)."
            + "".join(
                f" Also a possible contradiction on evidence {other} ({w}): "
                f"{v.verifier} ({v.score:.2f})."
                for other, (v, w) in sorted(tally.possible.items())
                if other != eid
            ),
        )
        return
    missing = sorted((tally.ran | set(verdict.unavailable)) - supporters)
    if missing or len(supporters) < cfg.quorum:
        _set(
            verdict, Status.UNCERTAIN, best.score, _quorum_reason(supporters, missing, verdict, cfg)
        )
        return
    tally_support = {eid: list(usable[eid].values()) for eid in usable}
    problem = policy_problem(claim, support_items, tally_support, cfg)
    if problem and cfg.uses("claim_type_policy"):
        _set(verdict, Status.UNCERTAIN, best.score, f"UNCERTAIN: support found but {problem}.")
        return
    _set(
        verdict,
        Status.PASS,
        min(v.score for fams in usable.values() for v in fams.values()),
        f"PASS: {len(supporters)} verifier families ({', '.join(sorted(supporters))}) "
        f"support the claim with verbatim quotes — the quorum is {cfg.quorum} — on "
        f"{len(support_items)} passage(s) from {verdict.independent_sources} independent "
        f"source(s), and no credible contradiction was found. Best: {_cite(best)}",
    )


def _quorum_reason(
    supporters: set[str], missing: list[str], verdict: ClaimVerdict, cfg: AggregateConfig
) -> str:
    said = f"supported by {', '.join(sorted(supporters))}"
    if missing:
        why = [
            f"{family} ({verdict.unavailable[family]})" if family in verdict.unavailable else family
            for family in missing
        ]
        return (
            f"UNCERTAIN: {said}, but not corroborated by {', '.join(why)}; PASS needs every "
            f"judging family that ran to support the claim (quorum {cfg.quorum})."
        )
    return (
        f"UNCERTAIN: {said} only; PASS needs {cfg.quorum} distinct verifier families and "
        f"{len(supporters)} ran and agreed."
    )


def policy_problem(
    claim: ClaimInput,
    items: list[EvidenceItem],
    support: dict[str, list[Vote]],
    cfg: AggregateConfig,
) -> str:
    """Why the claim type's evidence requirement is not met (empty when it is)."""
    passage = " ".join(i.text for i in items)
    quotes = " ".join(v.quote for i in items for v in support.get(i.evidence_id, []))
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


def _no_support_reason(tally: _Tally, by_id: dict[str, EvidenceItem]) -> str:
    if set(tally.support) & tally.scope_gap:
        return (
            "UNCERTAIN: the supporting passages do not cover the claim's scope (a named "
            "entity or date of the claim is missing from them)"
        )
    if set(tally.support) & tally.overstated:
        return (
            "UNCERTAIN: the evidence is hedged where the claim is stated as certain "
            "(overstatement); narrow the claim"
        )
    if tally.possible:
        eid, (vote, why) = max(tally.possible.items(), key=lambda kv: kv[1][0].score)
        return (
            f"UNCERTAIN: possible contradiction, not credible enough to FAIL ({why}): {_cite(vote)}"
        )
    return f"UNCERTAIN: none of {len(by_id)} admitted passage(s) states the claim"


def _notes_on_set_aside(verdict: ClaimVerdict, tally: _Tally) -> None:
    if verdict.status != Status.UNCERTAIN or not verdict.rationale.startswith(
        "UNCERTAIN: possible"
    ):
        for eid, (vote, why) in sorted(tally.possible.items()):
            _append(
                verdict,
                f"Possible contradiction on evidence {eid}, not credible ({why}): "
                f"{vote.verifier} ({vote.score:.2f}).",
            )
    for kind, votes in (("contradiction", tally.set_aside), ("support", tally.no_finding)):
        for why, n in sorted(Counter(why for _, why in votes).items()):
            _append(verdict, f"Not counted: {n} {kind} vote(s) because {why}.")


def _append(verdict: ClaimVerdict, sentence: str) -> None:
    """One more sentence of the rationale, the one before it ended with its full stop (a
    rationale may end on a quote or a parenthesis)."""
    verdict.rationale = f"{full_stop(verdict.rationale)} {sentence}".lstrip()


def _flags(
    verdict: ClaimVerdict,
    claim: ClaimInput,
    items: Sequence[EvidenceItem],
    tally: _Tally,
    cfg: AggregateConfig,
) -> None:
    """Rare and meaningful: each flag tells a reviewer something the status does not.

    Flags that ask for a closer look before approving (high impact, single source, safety,
    low-quality or no counter-evidence search) only go on PASS claims: every other status
    is reviewed anyway. Conflicts, possible contradictions, overstatement and an
    unavailable family are shown on any status.
    """
    flags: list[str] = []
    passed = verdict.status == Status.PASS
    if claim.high_impact and passed:
        flags.append(Flag.HIGH_IMPACT)
    if tally.contradict and tally.support:
        flags.append(Flag.CONFLICTING)
    if tally.possible and verdict.status != Status.FAIL:
        flags.append(Flag.POSSIBLE_CONTRADICTION)
    needs_corroboration = claim.high_impact or claim.needs_triangulation
    if passed and needs_corroboration and verdict.independent_sources < 2:
        flags.append(Flag.SINGLE_SOURCE)
    support = [i for i in items if i.evidence_id in verdict.support_ids]
    if passed and all(i.source_type in cfg.low_quality_types for i in support):
        flags.append(Flag.LOW_QUALITY)
    if passed and SAFETY_TERMS.search(claim.text):
        flags.append(Flag.SAFETY)
    if passed and not any(i.pool == "refute" for i in items):
        flags.append(Flag.NO_REFUTE_POOL)
    if tally.overstated & set(tally.support):
        flags.append(Flag.OVERSTATEMENT)
    if verdict.unavailable:
        flags.append(Flag.FAMILY_UNAVAILABLE)
    verdict.flags = [str(f) for f in flags]
