"""Run diffs: what changed between two runs of a plan, and which decisions to revisit.

Claims are matched across runs by fingerprint (then, for the leftovers, by subquestion
and word overlap: a "changed text" pair). Evidence is matched by the source's canonical
id plus the passage fingerprint; a source whose quoted snapshot hash differs between
the runs has "changed", one the new run no longer quotes is "gone". A decision taken
in the old run needs re-review when its claim's evidence changed under it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import QuerySet

from ledger.models import Claim, DispositionState
from research.models import Run
from review.models import ReviewDecision

# Unmatched claims of one subquestion this similar (word Jaccard) count as a text change.
TEXT_CHANGE_SIMILARITY = 0.5


@dataclass
class ClaimRef:
    code: str
    fingerprint: str
    text: str
    status: str
    review_state: str
    subquestion: str
    evidence: dict[str, str]  # "canonical_id#passage_fingerprint" -> snapshot sha256

    @property
    def sources(self) -> dict[str, set[str]]:
        """canonical id -> snapshot hashes this claim's quotes come from."""
        found: dict[str, set[str]] = {}
        for key, sha in self.evidence.items():
            found.setdefault(key.rsplit("#", 1)[0], set()).add(sha)
        return found


@dataclass
class ClaimPair:
    old: ClaimRef
    new: ClaimRef


@dataclass
class SourceChange:
    canonical_id: str
    title: str
    kind: str  # "changed" (another snapshot is quoted now) or "gone" (no longer quoted)
    old_sha256: list[str]
    new_sha256: list[str]
    claims: list[str]  # codes of old-run claims that quoted it
    new_claims: list[str] = field(default_factory=list)  # their new-run matches


@dataclass
class EvidenceChange:
    claim: str  # new-run claim code
    old_claim: str
    removed: list[str]
    added: list[str]


@dataclass
class ReReview:
    claim: str  # old-run claim code
    new_claim: str
    fingerprint: str
    text: str
    decision: str  # decision code
    action: str
    reviewer: str
    decided_at: str
    reasons: list[str]


@dataclass
class RunDiffRecord:
    old_run: str
    new_run: str
    added: list[ClaimRef] = field(default_factory=list)
    removed: list[ClaimRef] = field(default_factory=list)
    text_changed: list[ClaimPair] = field(default_factory=list)
    verdict_flips: list[ClaimPair] = field(default_factory=list)
    sources_changed: list[SourceChange] = field(default_factory=list)
    sources_gone: list[SourceChange] = field(default_factory=list)
    sources_new: list[str] = field(default_factory=list)
    evidence_changes: list[EvidenceChange] = field(default_factory=list)
    rereview: list[ReReview] = field(default_factory=list)

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
        }

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["summary"] = self.summary()
        return data


def previous_run(run: Run) -> Run | None:
    """The run this one re-runs, else the latest earlier run of the same plan."""
    if run.previous_run_id is not None:
        return run.previous_run
    return (
        Run.objects.filter(
            plan_version__plan_id=run.plan_version.plan_id, created_at__lt=run.created_at
        )
        .order_by("-created_at", "-pk")
        .first()
    )


def diff_runs(old: Run, new: Run) -> RunDiffRecord:
    """1. load both ledgers; 2. match claims; 3. compare sources; 4. flag decisions."""
    old_claims, new_claims = _claim_refs(old), _claim_refs(new)
    diff = RunDiffRecord(old_run=str(old.code), new_run=str(new.code))
    pairs = _match(old_claims, new_claims, diff)
    diff.verdict_flips = [p for p in pairs if p.old.status != p.new.status]
    titles = _source_titles(old, new)
    _compare_sources(old_claims, new_claims, pairs, titles, diff)
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
    return diff


def _claims(run: Run) -> QuerySet[Claim]:
    return (
        Claim.objects.filter(run=run)
        .exclude(disposition=DispositionState.SUPERSEDED)
        .select_related("subquestion")
        .prefetch_related("evidence__passage", "evidence__snapshot__source")
        .order_by("pk")
    )


def _claim_refs(run: Run) -> list[ClaimRef]:
    refs = []
    for claim in _claims(run):
        evidence = {
            f"{link.snapshot.source.canonical_id}#{link.passage_fingerprint}": (
                link.snapshot.text_sha256
            )
            for link in claim.evidence.all()
        }
        refs.append(
            ClaimRef(
                code=str(claim.code),
                fingerprint=claim.fingerprint,
                text=claim.text,
                status=claim.status,
                review_state=claim.review_state,
                subquestion=claim.subquestion.key if claim.subquestion else "",
                evidence=dict(sorted(evidence.items())),
            )
        )
    return refs


def _match(old: list[ClaimRef], new: list[ClaimRef], diff: RunDiffRecord) -> list[ClaimPair]:
    """Pair claims by fingerprint, then leftovers by subquestion and word overlap."""
    by_fp = {c.fingerprint: c for c in new}
    pairs, left_old = [], []
    for claim in old:
        match = by_fp.pop(claim.fingerprint, None)
        if match is None:
            left_old.append(claim)
        else:
            pairs.append(ClaimPair(claim, match))
    left_new = [c for c in new if c.fingerprint in by_fp]
    diff.text_changed = [p for p in pairs if p.old.text != p.new.text]
    for old_claim, new_claim in _similar_pairs(left_old, left_new):
        pair = ClaimPair(old_claim, new_claim)
        pairs.append(pair)
        diff.text_changed.append(pair)
    paired_old = {p.old.code for p in pairs}
    paired_new = {p.new.code for p in pairs}
    diff.removed = [c for c in old if c.code not in paired_old]
    diff.added = [c for c in new if c.code not in paired_new]
    return pairs


def _similar_pairs(old: list[ClaimRef], new: list[ClaimRef]) -> list[tuple[ClaimRef, ClaimRef]]:
    scored = sorted(
        (
            (-_jaccard(a.text, b.text), i, j)
            for i, a in enumerate(old)
            for j, b in enumerate(new)
            if a.subquestion == b.subquestion
        ),
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


def _source_titles(old: Run, new: Run) -> dict[str, str]:
    titles: dict[str, str] = {}
    for run in (old, new):
        for claim in _claims(run):
            for link in claim.evidence.all():
                source = link.snapshot.source
                titles.setdefault(source.canonical_id, source.title)
    return titles


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


def _run_sources(claims: list[ClaimRef]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for claim in claims:
        for canonical_id, shas in claim.sources.items():
            found.setdefault(canonical_id, set()).update(shas)
    return found


def _rereview(pairs: list[ClaimPair], diff: RunDiffRecord) -> list[ReReview]:
    """Decisions of old-run claims whose evidence (or text) is not what was reviewed."""
    moved = {c.canonical_id: c for c in diff.sources_changed + diff.sources_gone}
    changed_text = {p.old.code for p in diff.text_changed}
    latest = _latest_decisions([p.old.code for p in pairs])
    flagged = []
    for pair in pairs:
        decision = latest.get(pair.old.code)
        if decision is None:
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
            flagged.append(_rereview_row(pair, decision, reasons))
    return flagged


def _latest_decisions(codes: list[str]) -> dict[str, ReviewDecision]:
    latest: dict[str, ReviewDecision] = {}
    decisions = (
        ReviewDecision.objects.filter(claim__code__in=codes)
        .select_related("reviewer", "claim")
        .order_by("created_at", "pk")
    )
    for decision in decisions:
        latest[str(decision.claim.code)] = decision
    return latest


def _rereview_row(pair: ClaimPair, decision: ReviewDecision, reasons: list[str]) -> ReReview:
    return ReReview(
        claim=pair.old.code,
        new_claim=pair.new.code,
        fingerprint=pair.old.fingerprint,
        text=pair.old.text,
        decision=str(decision.code),
        action=decision.action,
        reviewer=decision.reviewer.get_username(),
        decided_at=decision.created_at.isoformat(),
        reasons=reasons,
    )
