"""Counter-evidence as a stage of its own: support and refutation queries, separate pools.

For every claim: support queries (the claim, its key terms) and refutation queries
(negation, limitation, failure case, replication, comparison) — the one generator of a
claim's refutation queries. Retrieval is injected as a callable so this module stays
pure; the verifier always receives a refute pool, and an empty one is visible
(``Flag.NO_REFUTE_POOL``), never hidden.

:func:`gather_counter_evidence` is the stage's pure step; its :class:`CounterRecord` is
what ``Claim.counter_evidence`` stores (``to_json`` / ``from_json`` at the column).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from research.pipeline.claims.relevance import (
    Candidate,
    Encode,
    Focus,
    RelevanceWeights,
    score_candidates,
)
from research.pipeline.language.direction import DOWN_WORDS, OPPOSITE_WORDS, UP_WORDS
from research.pipeline.language.lexicon import content_words
from research.pipeline.language.verdict_cues import NEGATABLE_AUXILIARY, STATED_NEGATION
from research.pipeline.verify.records import EvidenceItem, PoolName, Pools

Retrieve = Callable[[str, int], list[EvidenceItem]]
# How much each found passage bears on the claim (0–1), in order.
Relevance = Callable[[str, Sequence[EvidenceItem]], list[float]]
# A refutation pool must be about the claim: generic words of a counter query ("failure",
# "replication", "limitations") otherwise pull in unrelated papers.
MIN_RELEVANCE = 0.30


@dataclass(frozen=True)
class CounterQuery:
    text: str
    intent: str  # support, negation, limitation, failure, replication, comparison
    pool: PoolName


def topic(text: str, entities: Sequence[str] = (), limit: int = 6) -> str:
    """The claim's key terms: entities first, then content words, without direction words.

    An entity is a term on the terms of a content word: a lone letter ("A" of "group A")
    says nothing on its own and is left out; a content word already inside an entity is
    not repeated.
    """
    terms: list[str] = [e for e in entities if len(e) > 1]
    taken = {word.lower() for term in terms for word in term.split()}
    for w in content_words(text):
        if w not in UP_WORDS and w not in DOWN_WORDS and w.lower() not in taken:
            terms.append(w)
            taken.add(w.lower())
    return " ".join(dict.fromkeys(terms[:limit]))


def negate(text: str) -> str:
    """The claim's opposite: drop a negation, flip a direction word, or insert ``not``."""
    stripped = text.strip().rstrip(".").strip()
    if STATED_NEGATION.search(stripped):
        return STATED_NEGATION.sub("", stripped, count=1)
    tokens = stripped.split(" ")
    for i, token in enumerate(tokens):
        flipped = OPPOSITE_WORDS.get(token.lower())
        if flipped:
            tokens[i] = flipped.capitalize() if token[:1].isupper() else flipped
            return " ".join(tokens)
    if NEGATABLE_AUXILIARY.search(stripped):
        return NEGATABLE_AUXILIARY.sub(lambda m: f"{m.group(1)} not", stripped, count=1)
    return f"it is not true that {stripped}"


def counter_queries(
    text: str, claim_type: str = "", entities: Sequence[str] = ()
) -> list[CounterQuery]:
    key = topic(text, entities)
    support = [CounterQuery(text, "support", PoolName.SUPPORT)]
    if key and key.lower() != text.lower():
        support.append(CounterQuery(key, "support", PoolName.SUPPORT))
    refute = [
        CounterQuery(negate(text), "negation", PoolName.REFUTE),
        CounterQuery(f"{key} limitations", "limitation", PoolName.REFUTE),
        CounterQuery(f"{key} failure no effect", "failure", PoolName.REFUTE),
        CounterQuery(f"{key} replication failed to replicate", "replication", PoolName.REFUTE),
        CounterQuery(_comparison(text, key, claim_type), "comparison", PoolName.REFUTE),
    ]
    return support + refute


def _comparison(text: str, key: str, claim_type: str) -> str:
    match = re.search(r"\b(.+?)\s+(?:than|compared (?:with|to)|versus|vs\.?)\s+(.+)", text)
    if claim_type == "comparative" and match:
        return f"{match.group(2).rstrip('. ')} compared with {match.group(1)}"
    return f"{key} compared with alternatives"


def gather_pools(
    queries: Sequence[CounterQuery],
    retrieve: Retrieve,
    *,
    k: int = 5,
    anchors: Sequence[EvidenceItem] = (),
    background: Sequence[EvidenceItem] = (),
) -> Pools:
    """Retrieve per query into support / refute pools (refute wins a tie; anchors support)."""
    pools: dict[PoolName, dict[str, EvidenceItem]] = {p: {} for p in PoolName}
    for item in anchors:
        pools[PoolName.SUPPORT][item.evidence_id] = _in_pool(item, PoolName.SUPPORT)
    for query in queries:
        for item in retrieve(query.text, k):
            if item.evidence_id in pools[PoolName.SUPPORT] and query.pool == PoolName.REFUTE:
                if any(a.evidence_id == item.evidence_id for a in anchors):
                    continue
                del pools[PoolName.SUPPORT][item.evidence_id]
            if item.evidence_id in pools[PoolName.REFUTE]:
                continue
            pools[query.pool].setdefault(item.evidence_id, _in_pool(item, query.pool))
    seen = set(pools[PoolName.SUPPORT]) | set(pools[PoolName.REFUTE])
    for item in background:
        if item.evidence_id not in seen:
            pools[PoolName.BACKGROUND].setdefault(
                item.evidence_id, _in_pool(item, PoolName.BACKGROUND)
            )
    return Pools(
        support=tuple(pools[PoolName.SUPPORT].values()),
        refute=tuple(pools[PoolName.REFUTE].values()),
        background=tuple(pools[PoolName.BACKGROUND].values()),
    )


def _in_pool(item: EvidenceItem, pool: PoolName) -> EvidenceItem:
    return item if item.pool == pool else replace(item, pool=pool)


# --- the record saved on a claim ---------------------------------------------------------


@dataclass(frozen=True)
class SearchedQuery:
    """One counter query as it was searched, and how many passages it found."""

    text: str
    intent: str
    pool: str
    found: int = 0  # passages kept for the pools
    off_topic: int = 0  # passages found but set aside as not about the claim


@dataclass(frozen=True)
class PooledPassage:
    """A passage the stage put in a pool, with its retrieval score."""

    passage_id: int
    score: float


@dataclass(frozen=True)
class CounterRecord:
    """What the counter-evidence stage searched and found for one claim.

    ``unavailable`` says why nothing was searched (then the claim is judged on its
    anchor passages alone). The JSON form is ``{"queries": [{text, intent, pool,
    found}], "pools": {"support": [[passage_id, score]], "refute": …, "background":
    …}}`` plus ``"unavailable"`` when set.
    """

    queries: tuple[SearchedQuery, ...] = ()
    support: tuple[PooledPassage, ...] = ()
    refute: tuple[PooledPassage, ...] = ()
    background: tuple[PooledPassage, ...] = ()
    unavailable: str = ""

    def pool(self, name: PoolName) -> tuple[PooledPassage, ...]:
        return {
            PoolName.SUPPORT: self.support,
            PoolName.REFUTE: self.refute,
            PoolName.BACKGROUND: self.background,
        }[name]

    def to_json(self) -> dict[str, Any]:
        if self.unavailable:
            return {"unavailable": self.unavailable, "queries": [], "pools": {}}
        return {
            "queries": [
                {
                    "text": q.text,
                    "intent": q.intent,
                    "pool": q.pool,
                    "found": q.found,
                    "off_topic": q.off_topic,
                }
                for q in self.queries
            ],
            "pools": {
                str(name): [[p.passage_id, p.score] for p in self.pool(name)] for name in PoolName
            },
        }

    @classmethod
    def from_json(cls, data: object) -> CounterRecord | None:
        """The record a JSON column holds; None when the stage has not run (``{}``).

        Lenient: a malformed query entry is skipped, a missing pool is empty.
        """
        if not isinstance(data, dict) or not data:
            return None
        pools = data.get("pools")
        if not isinstance(pools, dict):
            pools = {}
        return cls(
            queries=tuple(
                SearchedQuery(
                    text=str(q.get("text", "")),
                    intent=str(q.get("intent", "")),
                    pool=str(q.get("pool", "")),
                    found=int(q.get("found") or 0),
                    off_topic=int(q.get("off_topic") or 0),
                )
                for q in data.get("queries") or []
                if isinstance(q, dict)
            ),
            support=_pooled(pools.get(str(PoolName.SUPPORT))),
            refute=_pooled(pools.get(str(PoolName.REFUTE))),
            background=_pooled(pools.get(str(PoolName.BACKGROUND))),
            unavailable=str(data.get("unavailable") or ""),
        )


def _pooled(pairs: object) -> tuple[PooledPassage, ...]:
    if not isinstance(pairs, list):
        return ()
    return tuple(
        PooledPassage(int(pair[0]), float(pair[1]))
        for pair in pairs
        if isinstance(pair, list | tuple) and len(pair) == 2
    )


def gather_counter_evidence(
    text: str,
    claim_type: str,
    entities: Sequence[str],
    retrieve: Retrieve,
    *,
    k: int,
    anchors: Sequence[EvidenceItem] = (),
    about: Relevance | None = None,
    min_relevance: float = MIN_RELEVANCE,
) -> CounterRecord:
    """The stage's step for one claim: its counter queries searched, pools gathered.

    With ``about``, a passage found that bears on the claim less than ``min_relevance``
    is set aside (counted per query as ``off_topic``), never pooled.
    """
    found: dict[str, int] = {}
    off: dict[str, int] = {}
    anchor_ids = {a.evidence_id for a in anchors}

    def counted(query: str, limit: int) -> list[EvidenceItem]:
        items = retrieve(query, limit)
        if about is not None and items:
            scores = about(text, items)
            kept = [
                i
                for i, score in zip(items, scores, strict=True)
                if score >= min_relevance or i.evidence_id in anchor_ids
            ]
            off[query] = len(items) - len(kept)
            items = kept
        found[query] = len(items)
        return items

    queries = counter_queries(text, claim_type, entities)
    pools = gather_pools(queries, counted, k=k, anchors=anchors)
    return CounterRecord(
        queries=tuple(
            SearchedQuery(q.text, q.intent, str(q.pool), found[q.text], off.get(q.text, 0))
            for q in queries
        ),
        support=_scored(pools.support),
        refute=_scored(pools.refute),
        background=_scored(pools.background),
    )


def _scored(items: Sequence[EvidenceItem]) -> tuple[PooledPassage, ...]:
    return tuple(PooledPassage(int(i.passage_id), round(float(i.score), 6)) for i in items)


def claim_relevance(encode: Encode | None, idf: dict[str, float]) -> Relevance:
    """How much passages bear on a claim: the miner's relevance parts with the claim as
    the question (its sentence vector against each passage's, its rare words in them).

    Weighted by the hand weights that :data:`MIN_RELEVANCE` was set with, not mining's fitted
    ones: those were fitted on single sentences and come with their own floor, and a
    counter pool scores whole passages."""

    def score(claim: str, items: Sequence[EvidenceItem]) -> list[float]:
        focus = Focus(claim, claim, claim, idf)
        found = [Candidate(item.text, item.title) for item in items]
        return [r.score for r in score_candidates(found, focus, encode, RelevanceWeights())]

    return score
