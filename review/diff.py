"""Run diffs: what changed between two runs of a plan, and which decisions carry over.

Loading (``claim_refs``, ``source_titles``) reads the ledger; ``compare`` is pure and
returns a typed :class:`RunDiffRecord`, which ``review.rundiffs`` stores as a ``RunDiff``
row when a run reaches review.

- Claims are matched across runs by the fingerprint of their text *as mined* (a claim a
  reviewer narrowed is matched by its text before narrowing), then, for the leftovers,
  by subquestion and word overlap (a "text changed" pair); the rest are added / removed;
  matched pairs with another verdict are verdict flips.
- Evidence is keyed by ``source canonical id # passage fingerprint``; a source whose
  quoted snapshot hashes differ between the runs has **changed**, one the new run no
  longer quotes is **gone**, one only the new run quotes is **new**.
- **Carry-over**: an earlier decision history (approve, reject, narrow → approve) carries
  over to the matching new claim when its mined text is the same, its verdict is the
  same (for a narrowed claim: the narrowed text re-verifies as it did, checked by the
  writer), and no evidence that would weaken the decision changed. Evidence is a quote
  (source, passage, offsets, snapshot); an approval stands while every quote it was
  approved on still supports the claim, no new quote contradicts it and none of those
  quotes' sources changed (the new run quotes another snapshot of it, even beside the
  one reviewed); a rejection while every contradicting quote is still there, unchanged
  the same way, and no new quote supports the claim.
  Every other new claim of the run *needs review*, with the reasons.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet
from pydantic import BaseModel, ConfigDict, Field

from ledger.models import Claim, DispositionState, EvidenceLink, Relation
from research.models import Run
from research.pipeline.text import claim_fingerprint
from review.models import Action, ReviewDecision

# Unmatched claims of one subquestion this similar (word Jaccard) count as a text change.
TEXT_CHANGE_SIMILARITY = 0.5
# Runs whose ledger is complete enough to compare with (and carry decisions from).
REVIEWED_STATES = ("awaiting_review", "synthesizing", "done")


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DecisionRef(Record):
    code: str
    action: str
    reviewer: str
    decided_at: str
    carried: bool = Field(description="Itself carried over from an earlier run.")
    reverified: str = Field(default="", description="A narrowing's re-verification verdict.")


class ClaimRef(Record):
    code: str
    fingerprint: str
    mined_fingerprint: str = Field(description="Of the text before any narrowing.")
    text: str
    status: str
    review_state: str
    subquestion: str
    evidence: dict[str, str] = Field(description='"canonical_id#passage_fp" -> snapshot sha256')
    supports: list[str] = Field(description="Supporting quotes: source#passage#offsets#snapshot.")
    contradicts: list[str] = Field(description="Contradicting quotes, the same way.")
    decisions: list[DecisionRef] = Field(default_factory=list)

    @property
    def sources(self) -> dict[str, set[str]]:
        """canonical id -> snapshot hashes this claim's quotes come from."""
        found: dict[str, set[str]] = {}
        for key, sha in self.evidence.items():
            found.setdefault(key.rsplit("#", 1)[0], set()).add(sha)
        return found

    @property
    def narrowed(self) -> bool:
        return any(d.action == Action.NARROW for d in self.decisions)


class ClaimPair(Record):
    old: ClaimRef
    new: ClaimRef


class SourceChange(Record):
    canonical_id: str
    title: str
    kind: str  # "changed" (another snapshot is quoted now) or "gone" (no longer quoted)
    old_sha256: list[str]
    new_sha256: list[str]
    claims: list[str]  # codes of old-run claims that quoted it
    new_claims: list[str] = Field(default_factory=list)  # their new-run matches


class EvidenceChange(Record):
    claim: str  # new-run claim code
    old_claim: str
    removed: list[str]
    added: list[str]


class ReReview(Record):
    claim: str  # old-run claim code
    new_claim: str
    fingerprint: str
    text: str
    decision: str  # decision code
    action: str
    reviewer: str
    decided_at: str
    reasons: list[str]


class CarryOver(Record):
    """An earlier decision history that applies to a new claim unchanged."""

    claim: str  # new-run claim code
    old_claim: str
    text: str  # the new claim's text as mined
    decisions: list[str]  # old decision codes, oldest first
    actions: list[str]
    reverify: str = Field(default="", description="Narrowed text to re-verify first.")
    expect: str = Field(default="", description="The verdict it must re-verify as.")


class NeedsReview(Record):
    claim: str  # new-run claim code
    old_claim: str = ""
    text: str
    reasons: list[str]


class RunDiffRecord(Record):
    old_run: str
    new_run: str
    added: list[ClaimRef] = Field(default_factory=list)
    removed: list[ClaimRef] = Field(default_factory=list)
    text_changed: list[ClaimPair] = Field(default_factory=list)
    verdict_flips: list[ClaimPair] = Field(default_factory=list)
    sources_changed: list[SourceChange] = Field(default_factory=list)
    sources_gone: list[SourceChange] = Field(default_factory=list)
    sources_new: list[str] = Field(default_factory=list)
    evidence_changes: list[EvidenceChange] = Field(default_factory=list)
    rereview: list[ReReview] = Field(default_factory=list)
    carried_over: list[CarryOver] = Field(default_factory=list)
    needs_review: list[NeedsReview] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        parts = (self.added, self.removed, self.text_changed, self.verdict_flips)
        more = (self.sources_changed, self.sources_gone, self.sources_new, self.rereview)
        return not any(parts + more)

    def summary(self) -> dict[str, int]:
        return {
            "claims_added": len(self.added),
            "claims_removed": len(self.removed),
            "claims_text_changed": len(self.text_changed),
            "verdict_flips": len(self.verdict_flips),
            "sources_changed": len(self.sources_changed),
            "sources_gone": len(self.sources_gone),
            "sources_new": len(self.sources_new),
            "evidence_changes": len(self.evidence_changes),
            "decisions_to_rereview": len(self.rereview),
            "decisions_carried_over": len(self.carried_over),
            "claims_needing_review": len(self.needs_review),
        }


# --- loading --------------------------------------------------------------------------


def previous_run(run: Run) -> Run | None:
    """The run this one re-runs, else the latest earlier run of the plan that reached review."""
    if run.previous_run_id is not None:
        return run.previous_run
    return (
        Run.objects.filter(
            plan_version__plan_id=run.plan_version.plan_id,
            created_at__lt=run.created_at,
            state__in=REVIEWED_STATES,
        )
        .order_by("-created_at", "-pk")
        .first()
    )


def diff_runs(old: Run, new: Run) -> RunDiffRecord:
    """Load both ledgers and compare them (nothing is written)."""
    titles = source_titles(old, new)
    return compare(claim_refs(old), claim_refs(new), titles, str(old.code), str(new.code))


def _claims(run: Run) -> QuerySet[Claim]:
    return (
        Claim.objects.filter(run=run)
        .exclude(disposition=DispositionState.SUPERSEDED)
        .select_related("subquestion")
        .prefetch_related("evidence__snapshot__source", "decisions__reviewer")
        .order_by("pk")
    )


def claim_refs(run: Run) -> list[ClaimRef]:
    return [claim_ref(claim) for claim in _claims(run)]


def claim_ref(claim: Claim) -> ClaimRef:
    links = list(claim.evidence.all())
    decisions = sorted(claim.decisions.all(), key=lambda d: (d.created_at, d.pk))
    mined = decisions[0].text_before if decisions else claim.text
    return ClaimRef(
        code=str(claim.code),
        fingerprint=claim.fingerprint,
        mined_fingerprint=claim_fingerprint(mined),
        text=claim.text,
        status=claim.status,
        review_state=claim.review_state,
        subquestion=claim.subquestion.key if claim.subquestion else "",
        evidence=dict(sorted((_evidence_key(link), link.snapshot.text_sha256) for link in links)),
        supports=_quotes(links, Relation.SUPPORTS),
        contradicts=_quotes(links, Relation.CONTRADICTS),
        decisions=[_decision_ref(d) for d in decisions],
    )


def _quotes(links: list[EvidenceLink], relation: str) -> list[str]:
    return sorted(
        f"{_evidence_key(link)}#{link.quote_start}-{link.quote_end}#{link.snapshot.text_sha256}"
        for link in links
        if link.relation == relation
    )


def _evidence_key(link: EvidenceLink) -> str:
    return f"{link.snapshot.source.canonical_id}#{link.passage_fingerprint}"


def _decision_ref(decision: ReviewDecision) -> DecisionRef:
    return DecisionRef(
        code=str(decision.code),
        action=decision.action,
        reviewer=decision.reviewer.get_username(),
        decided_at=decision.created_at.isoformat(),
        carried=decision.carried_from_id is not None,
        reverified=decision.reverified.status,
    )


def source_titles(*runs: Run) -> dict[str, str]:
    titles: dict[str, str] = {}
    links = EvidenceLink.objects.filter(claim__run__in=runs).select_related("snapshot__source")
    for link in links.only("snapshot__source__canonical_id", "snapshot__source__title"):
        source = link.snapshot.source
        titles.setdefault(source.canonical_id, source.title)
    return titles


# --- comparing (pure) -----------------------------------------------------------------


def compare(
    old: list[ClaimRef], new: list[ClaimRef], titles: dict[str, str], old_run: str, new_run: str
) -> RunDiffRecord:
    """1. match claims; 2. compare sources; 3. flag old decisions; 4. plan carry-over."""
    diff = RunDiffRecord(old_run=old_run, new_run=new_run)
    pairs = _match(old, new, diff)
    # A narrowed claim's verdict is its narrowed text's: not comparable with a mined one.
    diff.verdict_flips = [p for p in pairs if p.old.status != p.new.status and not p.old.narrowed]
    _compare_sources(old, new, pairs, titles, diff)
    diff.evidence_changes = [
        EvidenceChange(
            claim=p.new.code,
            old_claim=p.old.code,
            removed=sorted(set(p.old.evidence) - set(p.new.evidence)),
            added=sorted(set(p.new.evidence) - set(p.old.evidence)),
        )
        for p in pairs
        if p.old.evidence != p.new.evidence
    ]
    diff.rereview = _rereview(pairs, diff)
    _plan_carry_over(new, pairs, diff)
    return diff


def _match(old: list[ClaimRef], new: list[ClaimRef], diff: RunDiffRecord) -> list[ClaimPair]:
    """Pair claims by mined fingerprint, then leftovers by subquestion and word overlap."""
    by_fp = {c.mined_fingerprint: c for c in new}
    pairs, left_old = [], []
    for claim in old:
        match = by_fp.pop(claim.mined_fingerprint, None)
        if match is None:
            left_old.append(claim)
        else:
            pairs.append(ClaimPair(old=claim, new=match))
    left_new = [c for c in new if c.mined_fingerprint in by_fp]
    for old_claim, new_claim in _similar_pairs(left_old, left_new):
        pair = ClaimPair(old=old_claim, new=new_claim)
        pairs.append(pair)
        diff.text_changed.append(pair)
    paired_old = {p.old.code for p in pairs}
    paired_new = {p.new.code for p in pairs}
    diff.removed = [c for c in old if c.code not in paired_old]
    diff.added = [c for c in new if c.code not in paired_new]
    return pairs


def _similar_pairs(old: list[ClaimRef], new: list[ClaimRef]) -> list[tuple[ClaimRef, ClaimRef]]:
    scored = sorted(
        (-_jaccard(a.text, b.text), i, j)
        for i, a in enumerate(old)
        for j, b in enumerate(new)
        if a.subquestion == b.subquestion
    )
    used_old: set[int] = set()
    used_new: set[int] = set()
    found = []
    for neg_score, i, j in scored:
        if -neg_score < TEXT_CHANGE_SIMILARITY:
            break
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            found.append((old[i], new[j]))
    return found


def _jaccard(a: str, b: str) -> float:
    wa, wb = set(a.lower().split()), set(b.lower().split())
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def _compare_sources(
    old: list[ClaimRef],
    new: list[ClaimRef],
    pairs: list[ClaimPair],
    titles: dict[str, str],
    diff: RunDiffRecord,
) -> None:
    old_sources, new_sources = _run_sources(old), _run_sources(new)
    matches = {p.old.code: p.new.code for p in pairs}
    for canonical_id in sorted(old_sources):
        old_shas = old_sources[canonical_id]
        new_shas = new_sources.get(canonical_id, set())
        if old_shas == new_shas:
            continue
        claims = [c.code for c in old if canonical_id in c.sources]
        change = SourceChange(
            canonical_id=canonical_id,
            title=titles.get(canonical_id, ""),
            kind="changed" if new_shas else "gone",
            old_sha256=sorted(old_shas),
            new_sha256=sorted(new_shas),
            claims=claims,
            new_claims=[matches[c] for c in claims if c in matches],
        )
        (diff.sources_changed if new_shas else diff.sources_gone).append(change)
    diff.sources_new = sorted(set(new_sources) - set(old_sources))


def _run_sources(claims: Iterable[ClaimRef]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for claim in claims:
        for canonical_id, shas in claim.sources.items():
            found.setdefault(canonical_id, set()).update(shas)
    return found


def _rereview(pairs: list[ClaimPair], diff: RunDiffRecord) -> list[ReReview]:
    """Decisions of old-run claims whose evidence (or text) is not what was reviewed."""
    moved = {c.canonical_id: c for c in diff.sources_changed + diff.sources_gone}
    changed_text = {p.old.code for p in diff.text_changed}
    flagged = []
    for pair in pairs:
        if not pair.old.decisions:
            continue
        reasons = [
            f"source {cid} {moved[cid].kind}: quoted snapshot is no longer the one reviewed"
            for cid in sorted(pair.old.sources)
            if cid in moved
        ]
        if pair.old.evidence.keys() != pair.new.evidence.keys():
            reasons.append("evidence passages differ from the ones reviewed")
        if pair.old.code in changed_text:
            reasons.append("claim text changed")
        if reasons:
            last = pair.old.decisions[-1]
            flagged.append(
                ReReview(
                    claim=pair.old.code,
                    new_claim=pair.new.code,
                    fingerprint=pair.old.fingerprint,
                    text=pair.old.text,
                    decision=last.code,
                    action=last.action,
                    reviewer=last.reviewer,
                    decided_at=last.decided_at,
                    reasons=reasons,
                )
            )
    return flagged


def _plan_carry_over(new: list[ClaimRef], pairs: list[ClaimPair], diff: RunDiffRecord) -> None:
    """Which earlier decisions apply unchanged, and which new claims need a reviewer."""
    by_new = {p.new.code: p for p in pairs}
    changed_text = {p.new.code for p in diff.text_changed}
    for claim in new:
        if claim.decisions:
            if all(d.carried for d in claim.decisions):  # a retried stage: already carried
                diff.carried_over.append(_carried(claim, by_new.get(claim.code)))
            continue
        pair = by_new.get(claim.code)
        reasons = _carry_refusals(pair, claim.code in changed_text, diff)
        if reasons:
            old = pair.old.code if pair else ""
            diff.needs_review.append(
                NeedsReview(claim=claim.code, old_claim=old, text=claim.text, reasons=reasons)
            )
            continue
        assert pair is not None
        narrow = [d for d in pair.old.decisions if d.action == Action.NARROW]
        diff.carried_over.append(
            CarryOver(
                claim=claim.code,
                old_claim=pair.old.code,
                text=claim.text,
                decisions=[d.code for d in pair.old.decisions],
                actions=[d.action for d in pair.old.decisions],
                reverify=pair.old.text if narrow else "",
                expect=narrow[-1].reverified if narrow else "",
            )
        )


def _carried(claim: ClaimRef, pair: ClaimPair | None) -> CarryOver:
    return CarryOver(
        claim=claim.code,
        old_claim=pair.old.code if pair else "",
        text=claim.text,
        decisions=[d.code for d in claim.decisions],
        actions=[d.action for d in claim.decisions],
    )


def _carry_refusals(pair: ClaimPair | None, text_changed: bool, diff: RunDiffRecord) -> list[str]:
    """Why an earlier decision cannot carry over to this claim ([] when it can)."""
    if pair is None:
        return ["new claim: not in the earlier run"]
    old, new = pair.old, pair.new
    if text_changed:
        return ["claim text changed since the earlier run"]
    if not old.decisions:
        return ["not decided in the earlier run"]
    reasons = []
    if not old.narrowed and old.status != new.status:
        reasons.append(f"verdict flipped: {old.status} -> {new.status}")
    moved = {c.canonical_id: c.kind for c in diff.sources_changed + diff.sources_gone}
    rejected = old.decisions[-1].action == Action.REJECT
    # What would weaken the decision: for an approval, a supporting quote gone or a
    # contradicting one new; for a rejection, the other way round.
    weaker = {
        "a supporting quote is gone": _gone(old.supports, new.supports, not rejected),
        "a contradicting quote is new": _gone(new.contradicts, old.contradicts, not rejected),
        "a contradicting quote is gone": _gone(old.contradicts, new.contradicts, rejected),
        "a supporting quote is new": _gone(new.supports, old.supports, rejected),
    }
    named = set()
    for what, quotes in weaker.items():
        for source in sorted({q.split("#", 1)[0] for q in quotes}):
            why = f" (source {moved[source]})" if source in moved else ""
            reasons.append(f"evidence changed: {what}: {source}{why}")
            named.add(source)
    # The quotes the decision rests on come from a source that changed since: the new run
    # quotes another snapshot of it, even where it still quotes the one reviewed too.
    rests_on = old.contradicts if rejected else old.supports
    relation = "contradicting" if rejected else "supporting"
    for source in sorted({q.split("#", 1)[0] for q in rests_on} & moved.keys() - named):
        reasons.append(
            f"evidence changed: a {relation} quote's source {moved[source]} since: {source}"
        )
    return reasons


def _gone(before: list[str], after: list[str], counts: bool) -> list[str]:
    return sorted(set(before) - set(after)) if counts else []
