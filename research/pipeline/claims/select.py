"""A run's mining: findings scored, filtered by scope, merged across sources, within budget.

:func:`mine_run` takes every enabled subquestion's passages and returns a
:class:`RunMining`. Subquestion by subquestion:

1. **propose** — findings from the passages' sentences (:func:`mine.candidates`, or the
   LLM atomizer); everything else is dropped with its reason;
2. **profile** — each source's study design and population
   (:func:`design.profile_source`, unless the stage passed one in);
3. **scope** — a source outside the plan's scope (:mod:`scope`) drops its candidates
   with the reason ("outside the scope: participants aged 20–40 y …");
4. **relevance** — each candidate is scored against the question and its subquestion
   (:mod:`relevance`); below ``cfg.off_topic`` it is dropped as "off-topic (relevance x)";
   one that names the question's subject but none of the outcomes the subquestion (or the
   question) asks about (:mod:`outcome`) is dropped as "off-outcome (relevance x; …)";
5. **merge** — the same proposition within the subquestion becomes one draft.

Then for the whole run:

6. **merge across subquestions and sources** — the same proposition, or a paraphrase
   (sentence cosine ≥ ``cfg.paraphrase_cosine`` with the same direction, numbers and
   polarity), found under several subquestions or in several sources, becomes one claim
   whose anchors carry each source's quote; the other subquestions record a merged
   candidate;
   a counter-evidence subquestion keeps a finding on the question's outcome only when its
   wording states a null or opposite effect of the question's intervention
   (:mod:`stance`); one that agrees, or is about another exposure, is filed under the
   plan's evidence subquestion, and the counter subquestion records why;
7. **budget** — findings by rank score (relevance, plus a little for results and
   conclusions and for the scope's preferred designs), at most ``cfg.per_subquestion`` per
   subquestion and ``cfg.max_run_claims`` per run; the rest are dropped as over budget with
   their rank. No subquestion is promised a claim: with 15 claims, putting each
   subquestion's best first spent a third of the budget on findings a reader dropped
   (docs/benchmarks.md), and a subquestion whose findings all ranked below the budget is
   reported as a gap that says so;
8. **contested pairs** — kept claims on the same thing with conflicting directions
   ("reduces" / "no effect") are linked; a conflicting finding that missed the budget is
   kept anyway, so a reviewer sees both sides;
9. **facets** — population, intervention, outcome, direction, effect, year, design;
10. **gaps** — a subquestion left without any finding is an :class:`EvidenceGapDraft`
    with what was searched and why nothing qualified.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from research.pipeline.claims.design import SourceProfile, design_rank, profile_source
from research.pipeline.claims.facets import conflicting, direction_of, facets
from research.pipeline.claims.mine import (
    Proposal,
    candidates,
    draft_of,
    fold_into,
    merge,
    same_proposition,
)
from research.pipeline.claims.outcome import OutcomeFocus, outcome_focus, parse_aim
from research.pipeline.claims.records import (
    ClaimDraft,
    ContestedPair,
    DroppedCandidate,
    EvidenceGapDraft,
    MergedCandidate,
    MineConfig,
    MiningResult,
    PassageInput,
    RunInput,
    RunMining,
    SubquestionInput,
)
from research.pipeline.claims.relevance import (
    Candidate,
    Encode,
    Focus,
    Relevance,
    score_candidates,
)
from research.pipeline.claims.roles import CONCLUSION, RESULT
from research.pipeline.claims.scope import preference, scope_exclusion
from research.pipeline.claims.stance import (
    COUNTER_DIMENSION,
    EVIDENCE_DIMENSION,
    NULL,
    OPPOSITE,
    Question,
    read_question,
    stance_of,
)
from research.pipeline.language.direction import negated
from research.pipeline.language.lexicon import content_stems
from research.pipeline.language.quantities import quantities
from research.pipeline.planner import analyze_question

Propose = Callable[
    [Sequence[PassageInput], MineConfig],
    tuple[list[Proposal], list[DroppedCandidate], dict[str, str]],
]
ROLE_BONUS = {RESULT: 0.04, CONCLUSION: 0.04}
PREFERENCE_BONUS = 0.08
MAX_CONTESTED_EXTRA = 5  # conflicting findings kept beyond the budget


def rule_proposals(
    passages: Sequence[PassageInput], cfg: MineConfig
) -> tuple[list[Proposal], list[DroppedCandidate], dict[str, str]]:
    proposals, dropped = candidates(passages, cfg)
    return proposals, dropped, {}


class _Vectors:
    """Sentence vectors, each text encoded once per run."""

    def __init__(self, encode: Encode | None) -> None:
        self._encode = encode
        self._cache: dict[str, NDArray[np.float32]] = {}

    @property
    def available(self) -> bool:
        return self._encode is not None

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        assert self._encode is not None
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, self._encode(missing), strict=True):
                self._cache[text] = vector
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)

    def cosine(self, a: str, b: str) -> float:
        if not self.available:
            return 0.0
        va, vb = self.encode([a, b])
        return float(va @ vb)


@dataclass
class _Context:
    inp: RunInput
    cfg: MineConfig
    vectors: _Vectors
    profiles: dict[str, SourceProfile]
    passages: dict[str, PassageInput] = field(default_factory=dict)
    best: dict[str, float] = field(default_factory=dict)  # subquestion -> best relevance
    proposed: Counter[str] = field(default_factory=Counter)  # subquestion -> proposals
    # a winning draft -> the other subquestions it was found under, with their records
    also: dict[int, list[tuple[str, MergedCandidate]]] = field(default_factory=dict)

    def profile(self, draft: ClaimDraft) -> SourceProfile:
        return self.profiles.get(draft.anchors[0].source_key) or SourceProfile()


def mine_run(
    inp: RunInput,
    cfg: MineConfig | None = None,
    encode: Encode | None = None,
    propose: Propose | None = None,
) -> RunMining:
    """The run's claims, candidates, contested pairs and gaps (see the module docstring)."""
    cfg = cfg or MineConfig()
    ctx = _Context(inp, cfg, _Vectors(encode), dict(inp.profiles))
    results: dict[str, MiningResult] = {}
    survivors: dict[str, list[ClaimDraft]] = {}
    notes: dict[str, str] = {}
    if encode is None and inp.question:
        notes["relevance"] = "no sentence encoder: relevance is lexical only"
    for sq in inp.subquestions:
        proposals, dropped, said = (propose or rule_proposals)(sq.passages, cfg)
        notes.update(said)
        ctx.proposed[sq.key] = len(proposals)
        _profile_sources(ctx, sq.passages)
        results[sq.key] = MiningResult(claims=[], dropped=_relevance_first(ctx, sq, dropped))
        kept = _score_and_filter(ctx, sq, [draft_of(p) for p in proposals], results[sq.key])
        survivors[sq.key] = merge(kept, cfg.merge_jaccard)
    winners = _refile(ctx, _merge_across(ctx, survivors, results), results)
    chosen = _select(ctx, winners, results)
    contested = _contested_pairs(ctx, chosen, winners, results)
    for rank, (key, draft) in enumerate(chosen, start=1):
        draft.rank = rank
        _describe(ctx, draft)
        results[key].claims.append(draft)
    return RunMining(
        results=results,
        contested=contested,
        gaps=_gaps(ctx, chosen, results),
        notes=notes,
        profiles=ctx.profiles,
    )


# --- per subquestion ---------------------------------------------------------------------


def _profile_sources(ctx: _Context, passages: Sequence[PassageInput]) -> None:
    for passage in passages:
        ctx.passages[passage.passage_id] = passage
        key = passage.source_key or passage.cluster
        if key not in ctx.profiles:
            ctx.profiles[key] = profile_source(passage.title, passage.text)


def subject_of(question: str) -> str:
    """What the question asks about: X of "Does X reduce Y?", else the whole question."""
    shape = analyze_question(question)
    return shape.subject if shape.kind != "topic" else shape.question


def outcome_of(question: str) -> str:
    """What it asks about X's effect on: Y of "Does X reduce Y in Z?" ('' for other shapes)."""
    shape = analyze_question(question)
    return shape.outcome if shape.kind == "effect" else ""


def outcomes_of(ctx: _Context, sq: SubquestionInput) -> OutcomeFocus | None:
    """The outcomes the subquestion's candidates must name (:func:`outcome.outcome_focus`)."""
    return outcome_focus(ctx.inp.question, sq.text) if ctx.inp.question else None


def _relevances(
    ctx: _Context, sq: SubquestionInput, texts: list[str], passage_ids: list[str]
) -> list[Relevance | None]:
    inp = ctx.inp
    if not inp.question or not texts:
        return [None] * len(texts)
    wanted = outcomes_of(ctx, sq)
    outcome = outcome_of(inp.question)
    if wanted is not None and wanted.source == "subquestion":
        own = parse_aim(sq.text)
        outcome = own.outcome if own else outcome
    focus = Focus(
        inp.question, sq.text, subject_of(inp.question), inp.idf, outcome, outcomes=wanted
    )
    titles = [ctx.passages[pid].title if pid in ctx.passages else "" for pid in passage_ids]
    return list(
        score_candidates(
            [Candidate(text, title) for text, title in zip(texts, titles, strict=True)],
            focus,
            ctx.vectors.encode if ctx.vectors.available else None,
        )
    )


def _relevance_first(
    ctx: _Context, sq: SubquestionInput, dropped: list[DroppedCandidate]
) -> list[DroppedCandidate]:
    """Sentences dropped for their role are scored too: an off-topic one says so first."""
    scorable = [d for d in dropped if d.anchor.quote]
    scores = _relevances(
        ctx, sq, [d.anchor.quote for d in scorable], [d.anchor.passage_id for d in scorable]
    )
    by_id = {id(d): r for d, r in zip(scorable, scores, strict=True)}
    out = []
    for d in dropped:
        relevance = by_id.get(id(d))
        if relevance is None:
            out.append(d)
            continue
        reason = d.reason
        off = off_reason(ctx, sq, relevance)
        if off:
            reason = f"{off}; also: {d.reason}"
        out.append(replace(d, reason=reason, relevance=relevance.score))
    return out


def _score_and_filter(
    ctx: _Context, sq: SubquestionInput, drafts: list[ClaimDraft], result: MiningResult
) -> list[ClaimDraft]:
    if not drafts:
        return []
    inp = ctx.inp
    relevances = _relevances(
        ctx, sq, [d.text for d in drafts], [d.anchors[0].passage_id for d in drafts]
    )
    kept: list[ClaimDraft] = []
    for draft, relevance in zip(drafts, relevances, strict=True):
        profile = ctx.profile(draft)
        draft.relevance, draft.design = relevance, profile.design
        score = relevance.score if relevance else None
        if score is not None:
            ctx.best[sq.key] = max(ctx.best.get(sq.key, 0.0), score)
        why = scope_exclusion(inp.scope, profile)
        if not why and relevance is not None:
            why = off_reason(ctx, sq, relevance)
        if why:
            result.dropped.append(_dropped(draft, why))
            continue
        text = ctx.passages[draft.anchors[0].passage_id].text
        draft.score = round(
            (score if score is not None else 0.5)
            + ROLE_BONUS.get(draft.role, 0.0)
            + PREFERENCE_BONUS * preference(inp.scope, profile, text),
            6,
        )
        kept.append(draft)
    return kept


def off_reason(ctx: _Context, sq: SubquestionInput, relevance: Relevance) -> str:
    """Why a candidate is not about the question ('' when it is). One that names an effect
    question's subject but none of its outcomes is off-outcome whatever its score: "it names
    none of the outcomes asked" tells the reviewer more than a low relevance does."""
    if relevance.names_subject and not relevance.names_outcome:
        return off_outcome(ctx, sq, relevance)
    return off_topic(ctx, relevance) or off_outcome(ctx, sq, relevance)


def off_topic(ctx: _Context, relevance: Relevance) -> str:
    """Why a candidate is off-topic ('' when it is not): too low a score, or an effect
    question's subject not named."""
    if relevance.score < ctx.cfg.off_topic:
        return f"off-topic (relevance {relevance.score:.2f})"
    if not relevance.names_subject:
        subject = subject_of(ctx.inp.question)
        return f"off-topic (relevance {relevance.score:.2f}; it never names {subject})"
    return ""


def off_outcome(ctx: _Context, sq: SubquestionInput, relevance: Relevance) -> str:
    """Why a candidate that names the subject is off-outcome ('' when it is not): it names
    none of the outcomes asked, or reports a measure of another one instead."""
    if relevance.names_outcome:
        return ""
    wanted = outcomes_of(ctx, sq)
    asked = wanted.label if wanted else "the outcome asked"
    if relevance.other_outcome:
        return (
            f"off-outcome (relevance {relevance.score:.2f}; it is about "
            f"{relevance.other_outcome}, not {asked})"
        )
    return (
        f"off-outcome (relevance {relevance.score:.2f}; it names none of the outcomes asked: "
        f"{asked})"
    )


def _dropped(draft: ClaimDraft, reason: str) -> DroppedCandidate:
    return DroppedCandidate(
        draft.text,
        reason,
        draft.anchors[0],
        draft.claim_type,
        relevance=draft.relevance.score if draft.relevance else None,
        role=draft.role,
        design=draft.design,
    )


# --- across subquestions ---------------------------------------------------------------------


def _paraphrase(ctx: _Context, a: ClaimDraft, b: ClaimDraft) -> bool:
    """Two wordings of one finding: close in meaning, same direction, numbers and polarity."""
    if same_proposition(a, b, ctx.cfg.merge_jaccard):
        return True
    if not ctx.vectors.available:
        return False
    same_numbers = {q.value for q in quantities(a.text)} == {q.value for q in quantities(b.text)}
    return (
        same_numbers
        and negated(a.text) == negated(b.text)
        and direction_of(a.text) == direction_of(b.text)
        and ctx.vectors.cosine(a.text, b.text) >= ctx.cfg.paraphrase_cosine
    )


def _merge_across(
    ctx: _Context, survivors: dict[str, list[ClaimDraft]], results: dict[str, MiningResult]
) -> list[tuple[str, ClaimDraft]]:
    """One draft per proposition in the run; the others become merged candidates."""
    priority = {sq.key: sq.priority for sq in ctx.inp.subquestions}
    everything = [(key, d) for key, drafts in survivors.items() for d in drafts]
    # a finding found under several subquestions belongs to the most important of them
    everything.sort(key=lambda kd: (-priority.get(kd[0], 0), -kd[1].score, kd[1].fingerprint))
    winners: list[tuple[str, ClaimDraft]] = []
    for key, draft in everything:
        target = next(((k, w) for k, w in winners if _paraphrase(ctx, draft, w)), None)
        if target is None:
            winners.append((key, draft))
            continue
        target_key, winner = target
        sources = {a.source_key for a in winner.anchors}
        fold_into(winner, draft)
        if draft.score > winner.score:  # ranked by its best showing
            winner.score, winner.relevance = draft.score, draft.relevance
        if target_key == key:
            continue  # another wording in the same subquestion: recorded as a mention
        other = draft.anchors[0].source_key not in sources
        reason = (
            "the same finding from another source was kept under another subquestion; "
            "this source's sentence is one more anchor of that claim"
            if other
            else "the same proposition is a claim of another subquestion; its source "
            "sentence was added"
        )
        record = MergedCandidate(
            draft.text,
            winner.fingerprint,
            draft.anchors[0],
            reason,
            draft.claim_type,
            draft.relevance.score if draft.relevance else None,
            draft.role,
            draft.design,
        )
        results[key].merged.append(record)
        ctx.also.setdefault(id(winner), []).append((key, record))
        if draft.text in winner.mentions:
            winner.mentions.remove(draft.text)
    return winners


def _refile(
    ctx: _Context, winners: list[tuple[str, ClaimDraft]], results: dict[str, MiningResult]
) -> list[tuple[str, ClaimDraft]]:
    """A counter-evidence subquestion keeps a finding on the question's outcome only when
    its wording states a null or opposite effect of the question's intervention
    (:mod:`stance`, the bottom line's reading); the others (one that agrees, one about
    another exposure) are filed under the plan's evidence subquestion, and the counter
    subquestion records where each went. Findings on other outcomes (harms, limits) stay."""
    question = read_question(ctx.inp.question)
    by_priority = sorted(ctx.inp.subquestions, key=lambda sq: -sq.priority)
    home = next((sq.key for sq in by_priority if sq.dimension == EVIDENCE_DIMENSION), None)
    counter = {sq.key for sq in ctx.inp.subquestions if sq.dimension == COUNTER_DIMENSION}
    if question.asked is None or home is None or not counter:
        return winners
    refiled: list[tuple[str, ClaimDraft]] = []
    for key, draft in winners:
        if key in counter and _not_counter(draft, question):
            for other, record in list(ctx.also.get(id(draft), [])):
                if other == home:  # it was found there too: now it is that one's claim
                    results[home].merged.remove(record)
                    ctx.also[id(draft)].remove((other, record))
            results[key].merged.append(
                MergedCandidate(
                    draft.text,
                    draft.fingerprint,
                    draft.anchors[0],
                    f"kept as a claim of subquestion {home}: its wording states no null or "
                    "opposite effect of the question's intervention, so it is not "
                    "counter-evidence",
                    draft.claim_type,
                    draft.relevance.score if draft.relevance else None,
                    draft.role,
                    draft.design,
                )
            )
            key = home
        refiled.append((key, draft))
    return refiled


def _not_counter(draft: ClaimDraft, question: Question) -> bool:
    """On the question's outcome, without a null or opposite stance on it."""
    if not question.outcome_stems & content_stems(draft.text):
        return False
    return stance_of(draft.text, direction_of(draft.text), question) not in (NULL, OPPOSITE)


def _select(
    ctx: _Context, winners: list[tuple[str, ClaimDraft]], results: dict[str, MiningResult]
) -> list[tuple[str, ClaimDraft]]:
    """The best findings by score, within the budgets."""
    cfg = ctx.cfg
    order = sorted(winners, key=lambda kd: (-kd[1].score, kd[1].fingerprint))
    chosen: list[tuple[str, ClaimDraft]] = []
    per: Counter[str] = Counter()
    over: list[tuple[str, ClaimDraft]] = []
    for key, draft in order:
        home = _home(ctx, key, draft, per, results)
        if len(chosen) < cfg.max_run_claims and home is not None:
            chosen.append((home, draft))
            per[home] += 1
        else:
            over.append((key, draft))
    chosen += _contesting(ctx, chosen, over)
    kept = {id(d) for _, d in chosen}
    for position, (key, draft) in enumerate(order, start=1):
        if id(draft) not in kept:
            reason = (
                f"over the claim budget (at most {cfg.per_subquestion} per subquestion, "
                f"{cfg.max_run_claims} per run): ranked {position} of {len(order)}"
            )
            results[key].dropped.append(_dropped(draft, reason))
    chosen.sort(key=lambda kd: (-kd[1].score, kd[1].fingerprint))
    return chosen


def _home(
    ctx: _Context,
    key: str,
    draft: ClaimDraft,
    per: Counter[str],
    results: dict[str, MiningResult],
) -> str | None:
    """The subquestion the claim is kept under: its own, or, when that one's budget is
    spent, another it was also found under (None when none has room). Moving it swaps the
    merged-candidate records of the two subquestions."""
    if per[key] < ctx.cfg.per_subquestion:
        return key
    for other, record in ctx.also.get(id(draft), []):
        if per[other] < ctx.cfg.per_subquestion and other != key:
            results[other].merged.remove(record)
            results[key].merged.append(
                MergedCandidate(
                    draft.text,
                    draft.fingerprint,
                    draft.anchors[0],
                    f"kept as a claim of subquestion {other}, where it was found too and the "
                    "claim budget had room",
                    draft.claim_type,
                    draft.relevance.score if draft.relevance else None,
                    draft.role,
                    draft.design,
                )
            )
            if record.text != draft.text and record.text not in draft.mentions:
                draft.mentions.append(record.text)
            return other
    return None


def _about_the_same(ctx: _Context, a: ClaimDraft, b: ClaimDraft) -> bool:
    """Close enough in meaning and sharing what was measured (the outcome's words)."""
    if {x.source_key for x in a.anchors} == {x.source_key for x in b.anchors}:
        return False  # one source's own sentences: not a conflict between findings
    fa, fb = facets(a.text), facets(b.text)
    if not (fa.outcome and fb.outcome and fa.intervention and fb.intervention):
        return False
    if not content_stems(fa.outcome) & content_stems(fb.outcome):
        return False
    if not content_stems(fa.intervention) & content_stems(fb.intervention):
        return False
    if ctx.vectors.available:
        return ctx.vectors.cosine(a.text, b.text) >= ctx.cfg.contested_cosine
    overlap = content_stems(a.text) & content_stems(b.text)
    return len(overlap) / max(1, len(content_stems(a.text) | content_stems(b.text))) >= 0.4


def _conflict(ctx: _Context, a: ClaimDraft, b: ClaimDraft) -> str:
    da, db = direction_of(a.text), direction_of(b.text)
    if conflicting(da, db) and _about_the_same(ctx, a, b):
        return f"one finding says {da!r}, the other {db!r} about the same outcome"
    return ""


def _contesting(
    ctx: _Context, chosen: list[tuple[str, ClaimDraft]], over: list[tuple[str, ClaimDraft]]
) -> list[tuple[str, ClaimDraft]]:
    """Findings over budget that contradict a kept claim nothing kept contradicts yet: kept
    too, so both sides show."""
    drafts = [d for _, d in chosen]
    alone = [d for d in drafts if not any(_conflict(ctx, d, other) for other in drafts)]
    extra: list[tuple[str, ClaimDraft]] = []
    for key, draft in over:
        if len(extra) >= MAX_CONTESTED_EXTRA or not alone:
            break
        answered = [kept for kept in alone if _conflict(ctx, draft, kept)]
        if answered:
            extra.append((key, draft))
            alone = [kept for kept in alone if kept not in answered]
    return extra


def _contested_pairs(
    ctx: _Context,
    chosen: list[tuple[str, ClaimDraft]],
    winners: list[tuple[str, ClaimDraft]],
    results: dict[str, MiningResult],
) -> list[ContestedPair]:
    pairs: list[ContestedPair] = []
    drafts = [d for _, d in chosen]
    for i, a in enumerate(drafts):
        for b in drafts[i + 1 :]:
            reason = _conflict(ctx, a, b)
            if reason:
                first, second = sorted((a.fingerprint, b.fingerprint))
                pairs.append(ContestedPair(first, second, reason))
    return pairs


# --- describing the kept claims, and the gaps --------------------------------------------------


def _describe(ctx: _Context, draft: ClaimDraft) -> None:
    profiles = [ctx.profiles.get(a.source_key) or SourceProfile() for a in draft.anchors]
    best = min(profiles, key=lambda p: design_rank(p.design))
    who = best.population
    if best.age_text:
        who = f"{who} ({best.age_text})" if who else best.age_text
    draft.design = best.design
    draft.facets = facets(draft.text, who, best.year)


def _gaps(
    ctx: _Context, chosen: list[tuple[str, ClaimDraft]], results: dict[str, MiningResult]
) -> list[EvidenceGapDraft]:
    kept_keys = {key for key, _ in chosen}
    kept_fps = {d.fingerprint for _, d in chosen}
    gaps: list[EvidenceGapDraft] = []
    for sq in ctx.inp.subquestions:
        result = results[sq.key]
        if sq.key in kept_keys or any(m.target in kept_fps for m in result.merged):
            continue
        gaps.append(
            EvidenceGapDraft(
                subquestion=sq.key,
                queries=sq.queries,
                passages=len(sq.passages),
                candidates=ctx.proposed[sq.key] + len(result.dropped),
                best_relevance=round(ctx.best[sq.key], 4) if sq.key in ctx.best else None,
                reason=_gap_reason(ctx, sq, result),
            )
        )
    return gaps


def _gap_reason(ctx: _Context, sq: SubquestionInput, result: MiningResult) -> str:
    if not sq.passages:
        return "the library returned no passage for its queries"
    if not ctx.proposed[sq.key]:
        return (
            f"none of the sentences of the {len(sq.passages)} passages read reports a finding "
            "(methods, aims, background or fragments only)"
        )
    reasons = [d.reason for d in result.dropped]
    if reasons and all(r.startswith("outside the scope") for r in reasons if "finding" not in r):
        scope_only = [r for r in reasons if r.startswith("outside the scope")]
        if scope_only and not any(r.startswith(("off-topic", "off-outcome")) for r in reasons):
            return f"its {len(scope_only)} finding(s) were all outside the plan's scope"
    best = ctx.best.get(sq.key)
    if best is not None and best < ctx.cfg.off_topic:
        return (
            f"no finding was relevant enough (best relevance {best:.2f}, below "
            f"{ctx.cfg.off_topic:.2f})"
        )
    off = [r for r in reasons if r.startswith("off-outcome")]
    if off and not any(r.startswith("over the claim budget") for r in reasons):
        wanted = outcomes_of(ctx, sq)
        asked = wanted.label if wanted else "the outcome asked"
        return (
            f"its findings are about other outcomes: {len(off)} candidate(s) dropped as "
            f"off-outcome (none names {asked})"
        )
    if any(r.startswith("over the claim budget") for r in reasons):
        return "its findings ranked below the run's claim budget"
    return "no finding it found was both relevant and inside the scope"


def mine_claims(passages: Sequence[PassageInput], cfg: MineConfig | None = None) -> MiningResult:
    """Atomic claims of one set of passages (one subquestion), ranked, within budget: the
    same path as a run's mining, for one subquestion whose text is ``cfg.focus``, without
    sentence embeddings."""
    cfg = cfg or MineConfig()
    question = cfg.question or cfg.focus
    sq = SubquestionInput(key="", text=cfg.focus or question, passages=tuple(passages))
    return mine_run(RunInput(question=question, subquestions=(sq,)), cfg).results[""]
