"""Ledger rows as pipeline records: what a stage loads before it calls a pure step.

Reads only. The mining stage turns passages into ``PassageInput``; the counter-evidence
and verify stages turn claims and passages into ``ClaimInput`` / ``EvidenceItem`` and the
saved counter-evidence record back into ``Pools``; review re-verifies a narrowed wording
over ``linked_items``. The writers are in ``ledger.services``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from ledger.models import (
    Candidate,
    CandidateState,
    Claim,
    ContestedPair,
    DispositionState,
    EvidenceGap,
    EvidenceLink,
    Passage,
    Pool,
    Snapshot,
    Source,
    SparseStats,
    SparseTerm,
    Verdict,
    VerifierVote,
)
from research.models import Run
from research.pipeline.claims.design import TEXT_CHARS
from research.pipeline.claims.records import PassageInput
from research.pipeline.claims.relevance import idf_of
from research.pipeline.counter import CounterRecord
from research.pipeline.language.structure import label_role, label_spans
from research.pipeline.retrieve.records import Hit
from research.pipeline.text import normalize_text
from research.pipeline.verify.records import ClaimInput, EvidenceItem, PoolName, Pools

CONTEXT_MAX_CHARS = 4000  # a parent section up to this size is judged instead of its chunk
# Claims a report leans on hardest get a reviewer's eye; recommendations need two sources.
HIGH_IMPACT_TYPES = frozenset({"causal", "recommendation", "current-state"})
TRIANGULATED_TYPES = frozenset({"recommendation"})


def _bare(text: str) -> str:
    return normalize_text(text).rstrip(" .;:!?")


def _relative_sentences(passage: Passage) -> tuple[tuple[int, int], ...]:
    """Sentence spans relative to the passage text, without the document's title line.

    A title ("Meta-analysis of tariffs and import prices") is a label, not a
    proposition: mining it would make a claim no evidence can support or refute.
    """
    title = _bare(passage.source.title)
    spans = []
    for pair in passage.sentences or []:
        a, b = int(pair[0]) - passage.start, int(pair[1]) - passage.start
        if 0 <= a < b <= len(passage.text) and _bare(passage.text[a:b]) != title:
            spans.append((a, b))
    return tuple(spans)


LABEL_WINDOW = 3000  # how far before a passage its structure label is looked for


def label_in_force(passage: Passage) -> str:
    """The structure label or heading the passage's first sentence sits under ('' if none).

    The last inline label ("RESULTS", "Conclusions:") in the text before the passage, else
    the innermost heading of its section path that names a part of a report.
    """
    before = passage.snapshot.text[max(0, passage.start - LABEL_WINDOW) : passage.start]
    spans = label_spans(before)
    if spans:
        return spans[-1].label
    for heading in reversed([h.strip() for h in passage.section_path.split(" > ")]):
        if heading and label_role(heading):
            return heading
    return ""


def passage_input(passage: Passage, score: float = 0.0) -> PassageInput:
    source = passage.source
    return PassageInput(
        passage_id=str(passage.pk),
        text=passage.text,
        fingerprint=passage.fingerprint,
        snapshot_start=passage.start,
        sentences=_relative_sentences(passage),
        source_key=source.canonical_id,
        publisher=source.publisher,
        cluster=source.cluster,
        score=score,
        title=source.title,
        label=label_in_force(passage),
    )


def superseded_passages(passage_ids: Iterable[int]) -> set[int]:
    """Those of ``passage_ids`` whose snapshot is no longer their source's latest: a source
    ingested again keeps its old snapshot's passages (evidence links point at them), but a
    finding is mined from what the source says now."""
    latest = (
        Snapshot.objects.filter(source_id=OuterRef("source_id"))
        .order_by("-fetched_at", "-pk")
        .values("pk")[:1]
    )
    rows = Passage.objects.filter(pk__in=list(passage_ids)).exclude(snapshot_id=latest)
    return set(rows.values_list("pk", flat=True))


_PLACE = ("pk", "snapshot_id", "kind", "ordinal")  # what neighbour_passages reads


def neighbour_passages(passage_ids: Sequence[int], limit: int) -> list[int]:
    """Up to ``limit`` other passages of the snapshots of ``passage_ids`` (of the same kind),
    nearest first: by distance in reading order to the nearest of ``passage_ids`` in the
    same snapshot, then by that passage's place in ``passage_ids``, then in reading order.

    A search finds the passage that shares the query's words, often a document's
    background or aim; the finding it was found for usually sits a passage or two on."""
    if limit <= 0 or not passage_ids:
        return []
    given = {p.pk: p for p in Passage.objects.filter(pk__in=list(passage_ids)).only(*_PLACE)}
    place = {pid: i for i, pid in enumerate(passage_ids)}
    window = Q()
    for p in given.values():
        window |= Q(
            snapshot_id=p.snapshot_id,
            kind=p.kind,
            ordinal__gte=p.ordinal - limit,
            ordinal__lte=p.ordinal + limit,
        )
    ranked: dict[int, tuple[int, int, int]] = {}
    for near in Passage.objects.filter(window).exclude(pk__in=list(given)).only(*_PLACE):
        for origin in given.values():
            if (origin.snapshot_id, origin.kind) != (near.snapshot_id, near.kind):
                continue
            key = (abs(near.ordinal - origin.ordinal), place[origin.pk], near.ordinal)
            ranked[near.pk] = min(ranked.get(near.pk, key), key)
    return sorted(ranked, key=lambda pk: ranked[pk])[:limit]


def passage_inputs(scores: dict[int, float]) -> list[PassageInput]:
    """The passages of ``scores`` (id -> score) as mining input, in the given order (with
    their snapshots' text: the structure label before a passage is read from it)."""
    rows = Passage.objects.select_related("source", "snapshot").defer("embedding", "snapshot__raw")
    by_id = rows.in_bulk(list(scores))
    return [passage_input(by_id[i], scores[i]) for i in scores if i in by_id]


# What evidence_item() reads: not the vectors, nor the snapshots' bytes and text.
_HEAVY = ("embedding", "snapshot__raw", "snapshot__text")


def _passages() -> QuerySet[Passage]:
    return Passage.objects.select_related("source", "snapshot").defer(*_HEAVY)


def _links(links: QuerySet[EvidenceLink]) -> QuerySet[EvidenceLink]:
    """Links with their passage, its source and snapshot in the same query."""
    return links.select_related("passage__source", "passage__snapshot", "snapshot").defer(
        *(f"passage__{field}" for field in _HEAVY), "snapshot__raw", "snapshot__text"
    )


@dataclass(frozen=True)
class SourceText:
    """What a source's study design and population are read from."""

    canonical_id: str
    title: str
    text: str  # the start of its latest snapshot's text
    year: int | None


def source_texts(canonical_ids: Iterable[str]) -> list[SourceText]:
    out = []
    for source in Source.objects.filter(canonical_id__in=list(canonical_ids)).order_by("pk"):
        snapshot = source.snapshots.order_by("-fetched_at", "-pk").first()
        text = snapshot.text[:TEXT_CHARS] if snapshot else ""
        year = source.published_date.year if source.published_date else None
        out.append(SourceText(source.canonical_id, source.title, text, year))
    return out


def term_idf(terms: Iterable[str], kind: str = "chunk") -> dict[str, float]:
    """BM25 idf of each analyzed term in the library index of that passage kind."""
    wanted = set(terms)
    stats = SparseStats.objects.filter(kind=kind).first()
    if stats is None or not wanted:
        return {}
    df = dict(SparseTerm.objects.filter(kind=kind, term__in=wanted).values_list("term", "df"))
    return idf_of({t: df.get(t, 0) for t in wanted}, stats.documents)


def evidence_item(
    passage: Passage,
    pool: str,
    *,
    score: float = 0.0,
    cited_quote: str = "",
    anchor: bool = False,
) -> EvidenceItem:
    source, snapshot = passage.source, passage.snapshot
    return EvidenceItem(
        evidence_id=str(passage.pk),
        text=passage.text,
        fingerprint=passage.fingerprint,
        pool=PoolName(pool),
        passage_id=str(passage.pk),
        snapshot_start=passage.start,
        sentences=_relative_sentences(passage),
        source_key=source.canonical_id,
        publisher=source.publisher,
        cluster=source.cluster,
        source_type=source.source_type,
        title=source.title,
        published=source.published_date.isoformat() if source.published_date else "",
        fetched_at=snapshot.fetched_at.isoformat(),
        score=score,
        cited_quote=cited_quote,
        anchor=anchor,
    )


def in_context(passage: Passage) -> Passage:
    """The passage's parent section when it is short enough to judge whole, else itself.

    Retrieval finds small chunks; a contradiction often sits in the next sentence of the
    same abstract or section, so verifiers judge the parent (parent-child retrieval).
    """
    parent = passage.parent
    if parent is not None and len(parent.text) <= CONTEXT_MAX_CHARS:
        return parent
    return passage


def claim_input(claim: Claim, text: str | None = None) -> ClaimInput:
    flags = set(claim.flags or [])
    return ClaimInput(
        claim_id=str(claim.pk),
        text=claim.text if text is None else text,
        claim_type=claim.claim_type or "empirical",
        entities=tuple(str(e) for e in claim.entities or []),
        hedges=tuple(str(h) for h in claim.hedges or []),
        time_sensitive=claim.time_sensitive,
        high_impact="high-impact" in flags or claim.claim_type in HIGH_IMPACT_TYPES,
        needs_triangulation=claim.claim_type in TRIANGULATED_TYPES,
        fingerprint=claim.fingerprint if text is None else "",
    )


def anchor_items(claim: Claim) -> list[EvidenceItem]:
    """The passages the claim was mined from, each with the sentence it cites."""
    links = _links(claim.evidence.filter(is_anchor=True))
    return [
        evidence_item(link.passage, Pool.SUPPORT, cited_quote=link.quote, anchor=True)
        for link in links
    ]


def linked_items(claim: Claim) -> list[EvidenceItem]:
    """Every passage already linked to the claim, in its pool (for re-verification)."""
    links = _links(claim.evidence.all()).order_by("pk")
    return [evidence_item(link.passage, link.pool, anchor=link.is_anchor) for link in links]


def context_items(hits: Sequence[Hit]) -> list[EvidenceItem]:
    """Retrieval hits as evidence items, each in its parent context, one item per parent."""
    rows = Passage.objects.select_related(
        "source", "snapshot", "parent__source", "parent__snapshot"
    ).in_bulk([h.passage_id for h in hits])
    items: dict[int, EvidenceItem] = {}
    for hit in hits:
        if hit.passage_id in rows:
            passage = in_context(rows[hit.passage_id])
            if passage.pk not in items:
                items[passage.pk] = evidence_item(passage, Pool.SUPPORT, score=float(hit.score))
    return list(items.values())


def counter_record(claim: Claim) -> CounterRecord | None:
    """The claim's saved counter-evidence record (None until the stage has run)."""
    return CounterRecord.from_json(claim.counter_evidence)


def gathered_pools(claim: Claim) -> Pools:
    """The pools the counter-evidence stage saved, anchors first in support, each in context."""
    record = counter_record(claim) or CounterRecord()
    saved = {
        PoolName.SUPPORT: record.support,
        PoolName.REFUTE: record.refute,
        PoolName.BACKGROUND: record.background,
    }
    rows = _passages().in_bulk([p.passage_id for pooled in saved.values() for p in pooled])
    anchors = anchor_items(claim)
    pools: dict[PoolName, list[EvidenceItem]] = {name: [] for name in PoolName}
    pools[PoolName.SUPPORT] = list(anchors)
    anchor_ids = {a.evidence_id for a in anchors}
    for name, pooled in saved.items():
        for entry in pooled:
            passage = rows.get(entry.passage_id)
            if passage is not None and str(passage.pk) not in anchor_ids:
                pools[name].append(evidence_item(passage, name, score=entry.score))
    return Pools(
        support=tuple(pools[PoolName.SUPPORT]),
        refute=tuple(pools[PoolName.REFUTE]),
        background=tuple(pools[PoolName.BACKGROUND]),
    )


# --- what mining found out about a run ------------------------------------------------


@dataclass(frozen=True)
class Contest:
    """The other side of a contested pair, as one claim's page shows it."""

    other: Claim
    reason: str


def contested_partners(claims: Iterable[Claim]) -> dict[int, list[Contest]]:
    """Claim id -> the claims it is contested with (both directions of every pair)."""
    ids = [c.pk for c in claims]
    pairs = ContestedPair.objects.filter(Q(claim_id__in=ids) | Q(other_id__in=ids)).select_related(
        "claim", "other"
    )
    found: dict[int, list[Contest]] = {}
    for pair in pairs.order_by("pk"):
        found.setdefault(pair.claim_id, []).append(Contest(pair.other, pair.reason))
        found.setdefault(pair.other_id, []).append(Contest(pair.claim, pair.reason))
    return found


def contested_pairs(run: Run) -> list[ContestedPair]:
    return list(
        ContestedPair.objects.filter(run=run).select_related("claim", "other").order_by("pk")
    )


def found_elsewhere(run: Run) -> dict[str, int]:
    """Subquestion key -> how many claims kept under another subquestion its own search
    found too (merged candidates): findings that answer it, listed elsewhere."""
    rows = (
        Candidate.objects.filter(run=run, state=CandidateState.MERGED, claim__isnull=False)
        .exclude(claim__subquestion=F("subquestion"))
        .values("subquestion__key")
        .annotate(n=Count("claim", distinct=True))
    )
    return {row["subquestion__key"]: row["n"] for row in rows if row["subquestion__key"]}


def evidence_gaps(run: Run) -> list[EvidenceGap]:
    """The run's subquestions mining found no relevant finding for, in plan order."""
    return list(
        EvidenceGap.objects.filter(run=run)
        .select_related("subquestion")
        .order_by("subquestion__position", "pk")
    )


# --- completeness -------------------------------------------------------------------


def candidate_counts(run: Run) -> dict[str, int]:
    """How many propositions mining considered (``total``), and how many per state."""
    return Candidate.objects.filter(run=run).aggregate(
        total=Count("pk"),
        **{state: Count("pk", filter=Q(state=state)) for state in CandidateState.values},
    )


def ledger_gaps(run: Run) -> dict[str, int]:
    """How many of the run's claims lack each part a reviewer needs (all zero when whole).

    A claim is whole when it has a verdict, at least one quote bound to a snapshot, at
    least one valid verifier vote, a rationale, a disposition, and its counter-evidence
    search on record; a dropped candidate is whole when it says why.
    """
    claims = Claim.objects.filter(run=run).annotate(
        quoted=Exists(EvidenceLink.objects.filter(claim=OuterRef("pk")).exclude(quote="")),
        voted=Exists(VerifierVote.objects.filter(claim=OuterRef("pk"), valid=True)),
    )
    return {
        "without_verdict": claims.filter(status=Verdict.PENDING).count(),
        "without_quote": claims.filter(quoted=False).count(),
        "without_votes": claims.filter(voted=False).count(),
        "without_rationale": claims.filter(rationale="").count(),
        "without_disposition": claims.filter(disposition=DispositionState.PENDING).count(),
        "without_counter_evidence": claims.filter(counter_evidence={}).count(),
        "candidates_without_reason": Candidate.objects.filter(run=run, reason="").count(),
    }
