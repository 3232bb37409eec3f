"""The only writer of Claim, EvidenceLink, VerifierVote and Disposition rows.

Pipeline records in (``research.pipeline.claims`` drafts, ``research.pipeline.verify``
verdicts), ledger rows out. Every quote is checked against ``snapshot.text`` at its
offsets before it is stored; every mined claim ends with a disposition; discarded votes
are stored (where the one-vote-per-pair constraint allows) and always counted in the
run record under ``counters["verification"]``.

Entry points used by the run stages and the review helper:

- ``do_mine_subquestion(run, subquestion_key, pools) -> int``
- ``do_save_claims(run, result, subquestion=None) -> list[Claim]``
- ``do_gather_counter_evidence(claim, retrieve) -> dict`` (the counter-evidence stage)
- ``do_verify_claim(claim, *, retrieve=None, config=None) -> ClaimVerdict``
- ``do_record_verdict(claim, verdict, items) -> Claim``
- ``reverify_claim_text(claim, new_text) -> ClaimVerdict`` (no writes)
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from django.db import transaction

from ledger.models import (
    Candidate,
    CandidateState,
    Claim,
    ClaimType,
    DispositionState,
    EvidenceLink,
    Passage,
    Pool,
    Relation,
    Verdict,
    VerifierVote,
)
from research.models import Run, Subquestion
from research.pipeline.claims.records import (
    ClaimDraft,
    DroppedCandidate,
    MiningResult,
    PassageInput,
)
from research.pipeline.counter import Retrieve, counter_queries, gather_pools
from research.pipeline.text import claim_fingerprint, is_meaningful_quote, normalize_text
from research.pipeline.verify import VerifyConfig, verify_claim
from research.pipeline.verify.records import (
    ClaimInput,
    ClaimVerdict,
    EvidenceItem,
    PoolName,
    Pools,
    Status,
)

__all__ = [
    "MIN_QUOTE_CHARS",
    "candidate_counts",
    "ledger_gaps",
    "do_gather_counter_evidence",
    "do_mine_subquestion",
    "do_record_verdict",
    "do_save_claims",
    "do_verify_claim",
    "reverify_claim_text",
]

STATUS_TO_VERDICT = {Status.PASS: Verdict.PASS, Status.FAIL: Verdict.FAIL}
MINE_TOP_PASSAGES = 8
COUNTER_K = 4


# --- records from rows -------------------------------------------------------------

MIN_QUOTE_CHARS = 20
MIN_QUOTE_WORDS = 3
CONTEXT_MAX_CHARS = 4000  # a parent section up to this size is judged instead of its chunk
# Claims a report leans on hardest get a reviewer's eye; recommendations need two sources.
HIGH_IMPACT_TYPES = frozenset({"causal", "recommendation", "current-state"})
TRIANGULATED_TYPES = frozenset({"recommendation"})


def bind_quote(snapshot_text: str, quote: str, start: int) -> tuple[int, int] | None:
    """(start, end) when ``quote`` is at ``start`` in the snapshot and means something."""
    end = start + len(quote)
    if start < 0 or snapshot_text[start:end] != quote:
        return None
    if not is_meaningful_quote(quote, min_chars=MIN_QUOTE_CHARS, min_content_words=MIN_QUOTE_WORDS):
        return None
    return start, end


def _bare(text: str) -> str:
    return normalize_text(text).rstrip(" .;:!?")


def _relative_sentences(passage: Passage) -> tuple[tuple[int, int], ...]:
    """Sentence spans relative to the passage text, without the document's title line.

    A title ("Meta-analysis of vitamin D and fracture risk") is a label, not a
    proposition: mining it would make a claim no evidence can support or refute.
    """
    title = _bare(passage.source.title)
    spans = []
    for pair in passage.sentences or []:
        a, b = int(pair[0]) - passage.start, int(pair[1]) - passage.start
        if 0 <= a < b <= len(passage.text) and _bare(passage.text[a:b]) != title:
            spans.append((a, b))
    return tuple(spans)


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
    )


def evidence_item(
    passage: Passage, pool: str, *, score: float = 0.0, cited_quote: str = ""
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


# --- mining -------------------------------------------------------------------------


def do_mine_subquestion(run: Run, subquestion_key: str, pools: dict[str, Any]) -> int:
    """Mine the subquestion's top support passages; returns how many claims were kept."""
    from research.pipeline.claims import MineConfig, mine_claims, mine_claims_llm
    from research.providers.llm import LLMClient

    subquestion = Subquestion.objects.filter(
        plan_version_id=run.plan_version_id, key=subquestion_key
    ).first()
    ranked = sorted(pools.get("support", []), key=lambda p: -float(p.get("score", 0.0)))
    scores = {int(p["passage_id"]): float(p.get("score", 0.0)) for p in ranked}
    ids = list(scores)[:MINE_TOP_PASSAGES]
    by_id = Passage.objects.select_related("source", "snapshot").in_bulk(ids)
    passages = [passage_input(by_id[i], scores[i]) for i in ids if i in by_id]
    cfg = MineConfig(focus=subquestion.text if subquestion else "")
    client = LLMClient.from_settings()
    result = mine_claims_llm(passages, client, cfg) if client else mine_claims(passages, cfg)
    return len(do_save_claims(run, result, subquestion))


def do_save_claims(
    run: Run, result: MiningResult, subquestion: Subquestion | None = None
) -> list[Claim]:
    """The claims this mining result adds or extends; a candidate row for everything in it.

    Only a proposition with at least one anchor that still matches its snapshot becomes
    a claim (and goes on to counter-evidence and verification). The rest are recorded as
    dropped candidates with the reason, merged wordings as merged candidates. Idempotent:
    saving the same result twice adds nothing.
    """
    with transaction.atomic():
        saved = [c for c in (_save_draft(run, subquestion, d) for d in result.claims) if c]
        for candidate in result.dropped:
            _save_dropped(run, subquestion, candidate)
    return saved


def _save_draft(run: Run, subquestion: Subquestion | None, draft: ClaimDraft) -> Claim | None:
    bound = [(a, b) for a in draft.anchors if (b := _bind_anchor(a)) is not None]
    if not bound:
        _candidate(
            run,
            subquestion,
            draft.text,
            CandidateState.DROPPED,
            "its source sentence no longer matches the snapshot text",
            claim_type=draft.claim_type,
            origin=draft.origin,
        )
        return None
    claim, created = Claim.objects.get_or_create(
        run=run,
        fingerprint=draft.fingerprint,
        defaults={
            "subquestion": subquestion,
            "text": draft.text,
            "claim_type": draft.claim_type,
            "entities": draft.entities,
            "numbers": draft.numbers,
            "hedges": draft.hedges,
            "time_sensitive": draft.time_sensitive,
        },
    )
    for anchor, binding in bound:
        _anchor_link(claim, anchor, binding)
    where = f"from {len(bound)} passage(s)"
    if created:
        merged = f"; merged wordings: {draft.mentions}" if draft.mentions else ""
        _dispose(claim, DispositionState.PENDING, f"mined ({draft.origin}) {where}{merged}")
        state, reason = CandidateState.KEPT, f"became a claim; mined {where}"
    else:
        state = CandidateState.MERGED
        reason = "the same proposition was already a claim of this run; its anchors were added"
    _candidate(
        run,
        subquestion,
        draft.text,
        state,
        reason,
        claim=claim,
        claim_type=draft.claim_type,
        origin=draft.origin,
        binding=bound[0][1],
    )
    for wording in draft.mentions:
        _candidate(
            run,
            subquestion,
            wording,
            CandidateState.MERGED,
            "another wording of the same proposition (same content words and numbers)",
            claim=claim,
            claim_type=draft.claim_type,
            origin=draft.origin,
        )
    return claim


def _save_dropped(run: Run, subquestion: Subquestion | None, dropped: DroppedCandidate) -> None:
    """A dropped candidate; merged instead when its proposition is a claim already.

    A subquestion's claim budget is spent before propositions are matched across
    subquestions, so a candidate over budget here may already be a claim from another
    subquestion: its source sentence then becomes one more anchor of that claim.
    """
    binding = _bind_anchor(dropped.anchor) if dropped.anchor.quote else None
    claim = Claim.objects.filter(run=run, fingerprint=claim_fingerprint(dropped.text)).first()
    if claim is not None and binding is not None:
        _anchor_link(claim, dropped.anchor, binding)
        state = CandidateState.MERGED
        reason = f"{dropped.reason}; already a claim of this run, its source sentence was added"
    else:
        state, reason, claim = CandidateState.DROPPED, dropped.reason, None
    _candidate(
        run,
        subquestion,
        dropped.text,
        state,
        reason,
        claim=claim,
        claim_type=dropped.claim_type,
        binding=binding,
    )


Binding = tuple[Passage, int, int]


def _bind_anchor(anchor: Any) -> Binding | None:
    """The anchor's passage and snapshot span when its quote is still there verbatim."""
    passage = (
        Passage.objects.select_related("snapshot").filter(pk=int(anchor.passage_id)).first()
        if str(anchor.passage_id).isdigit()
        else None
    )
    if passage is None or passage.fingerprint != anchor.passage_fingerprint:
        return None
    start, end = anchor.snapshot_span
    if bind_quote(passage.snapshot.text, anchor.quote, start) is None:
        return None
    return passage, start, end


def _anchor_link(claim: Claim, anchor: Any, binding: Binding) -> EvidenceLink:
    passage, start, end = binding
    link, _ = EvidenceLink.objects.get_or_create(
        claim=claim,
        passage=passage,
        pool=Pool.SUPPORT,
        defaults={
            "snapshot": passage.snapshot,
            "quote": anchor.quote,
            "quote_start": start,
            "quote_end": end,
            "passage_fingerprint": passage.fingerprint,
            "is_anchor": True,
        },
    )
    return link


def _candidate(
    run: Run,
    subquestion: Subquestion | None,
    text: str,
    state: str,
    reason: str,
    *,
    claim: Claim | None = None,
    claim_type: str = "",
    origin: str = "",
    binding: Binding | None = None,
) -> Candidate:
    """One row per proposition per subquestion, with its source sentence when it binds."""
    fields: dict[str, Any] = {
        "text": text,
        "state": state,
        "reason": reason,
        "claim": claim,
        "claim_type": claim_type if claim_type in ClaimType.values else "",
        "origin": origin[:80],
    }
    if binding is not None:
        passage, start, end = binding
        fields |= {
            "passage": passage,
            "snapshot": passage.snapshot,
            "quote": passage.snapshot.text[start:end],
            "quote_start": start,
            "quote_end": end,
        }
    candidate, _ = Candidate.objects.get_or_create(
        run=run, subquestion=subquestion, fingerprint=claim_fingerprint(text), defaults=fields
    )
    return candidate


def _dispose(claim: Claim, state: str, reason: str, stage: str = "mining") -> None:
    claim.disposition = state
    claim.disposition_reason = reason
    claim.save(update_fields=["disposition", "disposition_reason"])
    claim.dispositions.create(state=state, reason=reason, stage=stage)


# --- verification -------------------------------------------------------------------


def anchor_items(claim: Claim) -> list[EvidenceItem]:
    links = claim.evidence.filter(is_anchor=True).select_related("passage__source", "snapshot")
    return [evidence_item(link.passage, Pool.SUPPORT, cited_quote=link.quote) for link in links]


def linked_items(claim: Claim) -> list[EvidenceItem]:
    """Every passage already linked to the claim, in its pool (for re-verification)."""
    links = claim.evidence.select_related("passage__source", "snapshot").order_by("pk")
    return [evidence_item(link.passage, link.pool) for link in links]


def library_retrieve(run: Run) -> Retrieve | None:
    """Passage retrieval over the plan's library and web captures (None when absent)."""
    try:
        from research import retrieval
        from research.pipeline.retrieve.records import Filters, RetrievalRequest
        from research.stages.retrieve import library_ids
    except ImportError:
        return None
    ids = library_ids(SimpleNamespace(run=run))  # type: ignore[arg-type]

    def retrieve(text: str, k: int) -> list[EvidenceItem]:
        request = RetrievalRequest(text=text, limit=k, filters=Filters(library_ids=ids))
        return context_items(retrieval.retrieve(request).hits)

    return retrieve


def context_items(hits: Sequence[Any]) -> list[EvidenceItem]:
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


# Sentence vectors a verify stage keeps in memory (≈ 1.5 KB each for MiniLM).
STAGE_EMBEDDING_CACHE = 50_000


def default_config() -> VerifyConfig:
    """The configured verifier families, encoding through one memory cache of sentences."""
    from research.pipeline.verify import default_verifiers
    from research.pipeline.verify.embedcache import EmbeddingCache
    from research.providers.embedder import Embedder

    cache = EmbeddingCache(Embedder.from_settings().encode, max_entries=STAGE_EMBEDDING_CACHE)
    verifiers, notes = default_verifiers(cache.encode)
    return VerifyConfig(verifiers=verifiers, notes=notes)


def do_gather_counter_evidence(claim: Claim, retrieve: Retrieve | None) -> dict[str, Any]:
    """The counter-evidence stage for one claim: support and refutation queries, pools saved.

    Saved on the claim (``counter_evidence``) as the queries with how many passages each
    found, and the support / refute / background pools as passage ids with their scores,
    so verification judges exactly what this stage gathered, and a reviewer can see what
    was searched for. Without retrieval the claim is judged on its anchors alone, and the
    record says so.
    """
    if retrieve is None:
        record: dict[str, Any] = {
            "unavailable": "retrieval unavailable; judged on its anchor passages only",
            "queries": [],
            "pools": {},
        }
    else:
        found: dict[str, int] = {}
        fetch = retrieve

        def counted(text: str, k: int) -> list[EvidenceItem]:
            items = fetch(text, k)
            found[text] = len(items)
            return items

        queries = counter_queries(claim.text, claim.claim_type, claim.entities)
        pools = gather_pools(queries, counted, k=COUNTER_K, anchors=anchor_items(claim))
        record = {
            "queries": [
                {"text": q.text, "intent": q.intent, "pool": str(q.pool), "found": found[q.text]}
                for q in queries
            ],
            "pools": {
                str(name): [[int(i.passage_id), round(float(i.score), 6)] for i in items]
                for name, items in (
                    (PoolName.SUPPORT, pools.support),
                    (PoolName.REFUTE, pools.refute),
                    (PoolName.BACKGROUND, pools.background),
                )
            },
        }
    claim.counter_evidence = record
    claim.save(update_fields=["counter_evidence"])
    return record


def gathered_pools(claim: Claim) -> Pools:
    """The pools the counter-evidence stage saved, anchors first in support, each in context."""
    saved: dict[str, list[list[float]]] = claim.counter_evidence.get("pools", {})
    ids = [int(pair[0]) for pairs in saved.values() for pair in pairs]
    rows = Passage.objects.select_related("source", "snapshot").in_bulk(ids)
    anchors = anchor_items(claim)
    pools: dict[str, list[EvidenceItem]] = {str(p): [] for p in PoolName}
    pools[str(PoolName.SUPPORT)] = list(anchors)
    anchor_ids = {a.evidence_id for a in anchors}
    for name, pairs in saved.items():
        for passage_id, score in pairs:
            passage = rows.get(int(passage_id))
            if passage is not None and str(passage.pk) not in anchor_ids and name in pools:
                pools[name].append(evidence_item(passage, name, score=float(score)))
    return Pools(
        support=tuple(pools[str(PoolName.SUPPORT)]),
        refute=tuple(pools[str(PoolName.REFUTE)]),
        background=tuple(pools[str(PoolName.BACKGROUND)]),
    )


def do_verify_claim(
    claim: Claim, *, retrieve: Retrieve | None = None, config: VerifyConfig | None = None
) -> ClaimVerdict | None:
    """Verify against the gathered pools (gathering them first when that stage has not run).

    Skips a claim that already has a verdict; ``retrieve`` defaults to the run's library.
    """
    if claim.status != Verdict.PENDING:
        return None
    config = config or default_config()
    if not claim.counter_evidence:
        do_gather_counter_evidence(
            claim, retrieve if retrieve is not None else library_retrieve(claim.run)
        )
    unavailable = claim.counter_evidence.get("unavailable")
    if unavailable:
        config = VerifyConfig(
            config.verifiers,
            config.aggregate,
            config.quotes,
            {**config.notes, "counter-evidence": str(unavailable)},
        )
    pools = gathered_pools(claim)
    verdict = verify_claim(claim_input(claim), pools, config)
    do_record_verdict(claim, verdict, pools.items())
    return verdict


def reverify_claim_text(
    claim: Claim, new_text: str, config: VerifyConfig | None = None
) -> ClaimVerdict:
    """Verify a narrowed wording against the same evidence the claim has; writes nothing."""
    items = linked_items(claim)
    return verify_claim(claim_input(claim, text=new_text), items, config or default_config())


def do_record_verdict(claim: Claim, verdict: ClaimVerdict, items: Sequence[EvidenceItem]) -> Claim:
    """Links for every judged passage, every vote (valid or not), status and disposition."""
    if verdict.claim_fingerprint != claim.fingerprint:
        raise ValueError("the verdict was reached for another wording of this claim")
    with transaction.atomic():
        links = _pool_links(claim, verdict, items)
        counts = _save_votes(claim, verdict, links)
        _apply(claim, verdict)
        _count_in_run(claim.run_id, counts, verdict)
    return claim


def _pool_links(
    claim: Claim, verdict: ClaimVerdict, items: Sequence[EvidenceItem]
) -> dict[str, EvidenceLink]:
    rejected = {r.item.evidence_id for r in verdict.rejected_evidence}
    links: dict[str, EvidenceLink] = {}
    passages = Passage.objects.select_related("snapshot").in_bulk(
        [int(i.passage_id) for i in items if i.evidence_id not in rejected]
    )
    for item in items:
        passage = passages.get(int(item.passage_id)) if item.evidence_id not in rejected else None
        if passage is None:
            continue
        link = _pool_link(claim, passage, item, verdict)
        if link is not None:
            links[item.evidence_id] = link
    return links


def _pool_link(
    claim: Claim, passage: Passage, item: EvidenceItem, verdict: ClaimVerdict
) -> EvidenceLink | None:
    existing = claim.evidence.filter(passage=passage).order_by("-is_anchor", "pk").first()
    quote = verdict.quotes.get(item.evidence_id) or (existing.quote if existing else "")
    span = _span(passage, quote) or _span(passage, _first_sentence(item))
    if span is None:
        return existing
    start, end = span
    relation = verdict.relations.get(item.evidence_id, Relation.INSUFFICIENT)
    fields = {
        "snapshot": passage.snapshot,
        "relation": relation,
        "quote": passage.snapshot.text[start:end],
        "quote_start": start,
        "quote_end": end,
        "passage_fingerprint": passage.fingerprint,
        "score": item.score or None,
    }
    if existing is not None:
        for key, value in fields.items():
            setattr(existing, key, value)
        existing.save(update_fields=list(fields))
        return existing
    return EvidenceLink.objects.create(claim=claim, passage=passage, pool=str(item.pool), **fields)


def _span(passage: Passage, quote: str) -> tuple[int, int] | None:
    if not quote:
        return None
    at = passage.text.find(quote)
    if at < 0:
        return None
    start = passage.start + at
    return bind_quote(passage.snapshot.text, quote, start)


def _first_sentence(item: EvidenceItem) -> str:
    from research.pipeline.text import is_meaningful_quote
    from research.pipeline.verify.features import item_sentences

    for a, b in item_sentences(item):
        if is_meaningful_quote(item.text[a:b]):
            return item.text[a:b]
    return ""


def _save_votes(
    claim: Claim, verdict: ClaimVerdict, links: dict[str, EvidenceLink]
) -> dict[str, int]:
    """Valid votes, then discarded ones where the (claim, evidence, verifier) slot is free."""
    used: set[tuple[int | None, str]] = set(claim.votes.values_list("evidence_id", "verifier"))
    counts = {"votes": 0, "discarded": 0}
    rows = [(v, "") for v in verdict.votes] + [(d.vote, d.reason) for d in verdict.discarded]
    for vote, reason in rows:
        link = links.get(vote.evidence_id)
        key = (link.pk if link else None, vote.verifier)
        counts["discarded" if reason else "votes"] += 1
        if key in used:
            continue
        used.add(key)
        VerifierVote.objects.create(
            claim=claim,
            evidence=link,
            verifier=vote.verifier[:60],
            family=vote.family[:20],
            verdict=vote.verdict if not reason else _safe_verdict(vote.verdict),
            score=vote.score if 0.0 <= vote.score <= 1.0 else None,
            quote=vote.quote,
            rationale=vote.rationale,
            valid=not reason,
            discard_reason=reason[:200],
        )
    return counts


def _safe_verdict(verdict: str) -> str:
    return verdict if verdict in Relation.values else Relation.INSUFFICIENT


def _apply(claim: Claim, verdict: ClaimVerdict) -> None:
    claim.status = STATUS_TO_VERDICT.get(verdict.status, Verdict.UNCERTAIN)
    claim.rationale = _rationale(verdict)
    claim.flags = list(verdict.flags)
    claim.confidence = verdict.confidence
    claim.independent_sources = verdict.independent_sources
    claim.support_count = len(verdict.support_ids)
    claim.refute_count = len(verdict.refute_ids)
    claim.allowed_scope = claim.text if verdict.status == Status.PASS else ""
    claim.prohibited_overstatements = _prohibited(claim, verdict)
    claim.save(
        update_fields=[
            "status",
            "rationale",
            "flags",
            "confidence",
            "independent_sources",
            "support_count",
            "refute_count",
            "allowed_scope",
            "prohibited_overstatements",
        ]
    )
    _dispose(
        claim,
        DispositionState.KEPT,
        f"verified {verdict.status.value.upper()}; kept in the ledger for review",
        stage="verifying",
    )


def _rationale(verdict: ClaimVerdict) -> str:
    parts = [verdict.rationale]
    counts = verdict.discard_counts()
    if counts:
        parts.append(
            "Discarded, not counted: "
            + ", ".join(f"{n} × {reason}" for reason, n in sorted(counts.items()))
            + "."
        )
    if verdict.notes:
        parts.append("Not run: " + "; ".join(f"{k}: {v}" for k, v in verdict.notes.items()))
    return " ".join(parts)


def _prohibited(claim: Claim, verdict: ClaimVerdict) -> list[str]:
    out = ["stating it beyond the setting of the quoted evidence"]
    if claim.hedges:
        out.append(f"dropping the hedge ({', '.join(claim.hedges)})")
    if verdict.independent_sources < 2:
        out.append("presenting it as independently corroborated")
    if claim.numbers:
        out.append("changing or rounding its numbers or units")
    return out


def _count_in_run(run_id: int, counts: dict[str, int], verdict: ClaimVerdict) -> None:
    run = Run.objects.select_for_update().get(pk=run_id)
    section: dict[str, Any] = dict(run.counters.get("verification", {}))
    section["claims"] = int(section.get("claims", 0)) + 1
    section["votes"] = int(section.get("votes", 0)) + counts["votes"]
    section["discarded"] = int(section.get("discarded", 0)) + counts["discarded"]
    reasons: dict[str, int] = dict(section.get("discard_reasons", {}))
    for reason, n in verdict.discard_counts().items():
        reasons[reason] = reasons.get(reason, 0) + n
    section["discard_reasons"] = reasons
    status = verdict.status.value
    section[status] = int(section.get(status, 0)) + 1
    run.counters = {**run.counters, "verification": section}
    run.save(update_fields=["counters"])


# --- completeness -------------------------------------------------------------------


def candidate_counts(run: Run) -> dict[str, int]:
    """How many propositions mining considered (``total``), and how many per state."""
    from django.db.models import Count, Q

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
    from django.db.models import Exists, OuterRef

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
