"""Counter-evidence as a stage of its own: support and refutation queries, separate pools.

For every claim: support queries (the claim, its key terms) and refutation queries
(negation, limitation, failure case, replication, comparison). Retrieval is injected as
a callable so this module stays pure; the verifier always receives a refute pool, and
an empty one is visible (``Flag.NO_REFUTE_POOL``), never hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from research.pipeline.text import DOWN_WORDS, OPPOSITE_WORDS, UP_WORDS, content_words
from research.pipeline.verify.records import EvidenceItem, PoolName, Pools

Retrieve = Callable[[str, int], list[EvidenceItem]]

_AUX = re.compile(
    r"\b(is|are|was|were|can|could|does|do|did|has|have|had|will|would|may|might|should|must)\b"
)
_NEGATION = re.compile(r"\b(not|no|never|n't)\b\s*", re.IGNORECASE)


@dataclass(frozen=True)
class CounterQuery:
    text: str
    intent: str  # support, negation, limitation, failure, replication, comparison
    pool: PoolName


def topic(text: str, entities: Sequence[str] = (), limit: int = 6) -> str:
    """The claim's key terms: entities first, then content words, without direction words.

    One- and two-letter entities ("D" of "vitamin D", "OH" of "25(OH)D") say nothing on
    their own and are left out; a content word already inside an entity is not repeated.
    """
    terms: list[str] = [e for e in entities if len(e) > 2 or any(c.isdigit() for c in e)]
    taken = {word.lower() for term in terms for word in term.split()}
    for w in content_words(text):
        if w not in UP_WORDS and w not in DOWN_WORDS and w.lower() not in taken:
            terms.append(w)
            taken.add(w.lower())
    return " ".join(dict.fromkeys(terms[:limit]))


def negate(text: str) -> str:
    """The claim's opposite: drop a negation, flip a direction word, or insert ``not``."""
    stripped = text.strip().rstrip(".").strip()
    if _NEGATION.search(stripped):
        return _NEGATION.sub("", stripped, count=1)
    tokens = stripped.split(" ")
    for i, token in enumerate(tokens):
        flipped = OPPOSITE_WORDS.get(token.lower())
        if flipped:
            tokens[i] = flipped.capitalize() if token[:1].isupper() else flipped
            return " ".join(tokens)
    if _AUX.search(stripped):
        return _AUX.sub(lambda m: f"{m.group(1)} not", stripped, count=1)
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
    from dataclasses import replace

    return item if item.pool == pool else replace(item, pool=pool)
