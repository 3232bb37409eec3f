"""The production retrieval path: BM25 and pgvector HNSW in Postgres, then fusion,
diversity and reranking (pure stages in ``research.pipeline.retrieve``).

Callable from workers and web views alike; all state is in Postgres, so any process on
any machine sees the same index. One query costs: the query encoded once (all its
variants in one batch, in a helper thread), meanwhile one SQL statement for the BM25 lists
of every variant, then one for the dense lists (sent with the ``SET LOCAL`` of the HNSW
and JIT settings in one round trip), and one statement to load the head of the fused
list. Hits are typed ``Hit`` records that keep every retriever's rank and score.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection, transaction

from ledger.services.sparse_index import bm25_top_k, indexed_kinds
from research.pipeline.retrieve import diversify, fuse, queries
from research.pipeline.retrieve.records import (
    DiversityConfig,
    Filters,
    Hit,
    RetrievalRequest,
    RetrievalResult,
    RetrieverHit,
)
from research.pipeline.retrieve.rerank import Scorer, rerank
from research.pipeline.retrieve.sparse import BM25Params, has_identifier, query_terms

if TYPE_CHECKING:
    from research.providers.embedder import Embedder

BM25 = "bm25"
DENSE = "dense"


@dataclass(frozen=True)
class RetrievalConfig:
    """Knobs read from settings at call time (never at import)."""

    rrf_k: int = 60
    ef_search: int = 100
    bm25: BM25Params = field(default_factory=BM25Params)
    rerank_top_n: int = 50
    head: int = 100  # fused hits loaded with their text for diversity / reranking
    identifier_weight: float = 2.0  # BM25's RRF weight for a query with an exact identifier
    query_threads: int = 1  # torch threads to encode a query (0: leave the process setting)

    @classmethod
    def from_settings(cls) -> RetrievalConfig:
        return cls(
            rrf_k=settings.RETRIEVAL_RRF_K,
            ef_search=settings.RETRIEVAL_HNSW_EF_SEARCH,
            rerank_top_n=getattr(settings, "RETRIEVAL_RERANK_TOP_N", 50),
            identifier_weight=float(getattr(settings, "RETRIEVAL_IDENTIFIER_BM25_WEIGHT", 2.0)),
            query_threads=int(getattr(settings, "RETRIEVAL_QUERY_THREADS", 1)),
        )


@dataclass(frozen=True)
class _Spec:
    """One ranked list to compute: a retriever over one query variant (and passage kind)."""

    name: str
    retriever: str
    variant: int
    kind: str = ""


class Retriever:
    """Holds the query encoder and reranker of a process; ``retrieve`` is the entry point."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        reranker: Scorer | None = None,
        reranker_reason: str = "",
        config: RetrievalConfig | None = None,
    ) -> None:
        self.embedder = embedder
        self.reranker = reranker
        self.reranker_reason = reranker_reason
        self.config = config or RetrievalConfig.from_settings()

    @classmethod
    def from_settings(cls) -> Retriever:
        from research.providers.embedder import Embedder
        from research.providers.reranker import load_reranker_from_settings

        reranker, reason = load_reranker_from_settings()
        return cls(Embedder.from_settings(), reranker, reason)

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        """Candidates from each retriever, fused, diversified or rolled up, reranked.

        1. query variants for the query class, encoded once in one batch;
        2. all BM25 lists in one statement (run while the encoder works), then all dense
           lists in one statement;
        3. RRF (document level: each list rolled up to sources first);
        4. load the fused head; MMR + caps when asked; rerank when the mode says so.
        """
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        variants = queries.variants(request.text, request.query_class)
        texts = [v.text for v in variants]
        lists = self._lists(request, texts, timings)
        fusing = time.perf_counter()
        fused = self._fuse(lists, request, texts)
        timings["fuse_ms"] = _ms(fusing)
        result = self._finish(request, fused, timings)
        result.counters = {"variants": len(variants), "candidates": len(fused)}
        result.counters.update({f"{name}_hits": len(hits) for name, hits in lists.items()})
        timings["total_ms"] = _ms(clock)
        return result

    # --- steps ---------------------------------------------------------------------

    def _lists(
        self, request: RetrievalRequest, texts: list[str], timings: dict[str, float]
    ) -> dict[str, list[RetrieverHit]]:
        """Every ranked list; BM25 runs in Postgres while the query is being encoded."""
        specs = self._specs(request, len(texts))
        sparse = [s for s in specs if s.retriever == BM25]
        dense = [s for s in specs if s.retriever == DENSE]
        # in a copy of this context: the encoding counts towards the stage's cost
        run_here = contextvars.copy_context().run
        encoding = _encoder_pool().submit(run_here, self._timed_encode, texts) if dense else None
        lists: dict[str, list[RetrieverHit]] = {spec.name: [] for spec in specs}
        clock = time.perf_counter()
        if sparse:
            lists.update(self._search_sparse(sparse, texts, request))
        sql_ms = _ms(clock)
        if encoding is not None:
            vectors, timings["encode_ms"] = encoding.result()
            clock = time.perf_counter()
            lists.update(self._search(dense, texts, vectors, request))
            sql_ms += _ms(clock)
        timings["search_ms"] = sql_ms
        return lists

    def _timed_encode(self, texts: list[str]) -> tuple[np.ndarray, float]:
        clock = time.perf_counter()
        return self._encode(texts), _ms(clock)

    def _specs(self, request: RetrievalRequest, n_variants: int) -> list[_Spec]:
        sparse_kinds = [k for k in request.filters.passage_kinds if k in indexed_kinds()]
        specs = []
        for v in range(n_variants):
            suffix = f":{v}" if v else ""
            if request.mode != DENSE:
                for kind in sparse_kinds:
                    label = BM25 if len(sparse_kinds) == 1 else f"{BM25}[{kind}]"
                    specs.append(_Spec(label + suffix, BM25, v, kind))
            if request.mode != BM25:
                specs.append(_Spec(DENSE + suffix, DENSE, v))
        return specs

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self.embedder is None:
            from research.providers.embedder import Embedder

            self.embedder = Embedder.from_settings()
        with torch_threads(self.config.query_threads):
            return self.embedder.encode(texts)

    def _search_sparse(
        self, specs: list[_Spec], texts: list[str], request: RetrievalRequest
    ) -> dict[str, list[RetrieverHit]]:
        """Each BM25 list, exact, filtered after ranking (``sparse_index.bm25_top_k``)."""
        condition, params = filter_sql(request.filters, "p.source_id")
        lists: dict[str, list[RetrieverHit]] = {}
        for spec in specs:
            terms = query_terms(texts[spec.variant])
            rows = (
                bm25_top_k(
                    spec.kind,
                    terms,
                    request.candidates,
                    condition=condition,
                    params=params,
                    bm25=self.config.bm25,
                )
                if terms
                else []
            )
            ranked = enumerate(rows, 1)
            lists[spec.name] = [RetrieverHit(p, r, score, s) for r, (p, s, score) in ranked]
        return lists

    def _search(
        self,
        specs: list[_Spec],
        texts: list[str],
        vectors: np.ndarray | None,
        request: RetrievalRequest,
    ) -> dict[str, list[RetrieverHit]]:
        """All dense lists in one statement."""
        assert vectors is not None
        condition, params = filter_sql(request.filters)
        params["k"] = request.candidates
        params["kinds"] = list(request.filters.passage_kinds)
        parts = []
        for i, spec in enumerate(specs):
            params[f"vec{i}"] = _vector_literal(vectors[spec.variant])
            sql = DENSE_SQL.format(filter=condition or "TRUE", i=i)
            parts.append(f"SELECT {i} AS spec, q.* FROM ({sql}) q")
        lists: dict[str, list[RetrieverHit]] = {spec.name: [] for spec in specs}
        if not parts:
            return lists
        rows = self._execute(" UNION ALL ".join(parts), params)
        return _rank(rows, specs, lists)

    def _execute(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """The dense statement after its ``SET LOCAL``s, in one round trip.

        Django's psycopg cursor binds parameters on the client, so the settings and the
        statement go as one simple-protocol message, which Postgres runs as one implicit
        transaction: the settings hold for this statement only (inside a caller's
        transaction, until that ends, as ``SET LOCAL`` always did). Four round trips before
        (BEGIN, SET, SELECT, COMMIT). A cursor that binds on the server cannot send two
        statements at once and takes the old way.
        """
        ef = int(self.config.ef_search)
        settings_sql = (
            f"SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order;"
            " SET LOCAL jit = off"
        )
        with connection.cursor() as cursor:
            if isinstance(cursor.cursor, psycopg.ClientCursor):
                cursor.execute(f"{settings_sql}; {sql}", params)
                while cursor.description is None and cursor.nextset():
                    pass  # past the SETs' results to the statement's rows
                return list(cursor.fetchall())
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(settings_sql)
            cursor.execute(sql, params)
            return list(cursor.fetchall())

    def _fuse(
        self, lists: dict[str, list[RetrieverHit]], request: RetrievalRequest, texts: list[str]
    ) -> list[Hit]:
        weights = {
            name: self.config.identifier_weight
            for name in lists
            if name.startswith(BM25) and has_identifier(texts[_variant_of(name)])
        }
        if request.level == "document":
            return fuse.rrf_documents(lists, k=self.config.rrf_k, weights=weights)
        return fuse.rrf(lists, k=self.config.rrf_k, weights=weights)

    def _finish(
        self, request: RetrievalRequest, fused: list[Hit], timings: dict[str, float]
    ) -> RetrievalResult:
        clock = time.perf_counter()
        head_size = request.limit
        if request.diversity is not None:
            head_size = max(head_size, self.config.head)
        if request.mode == "hybrid+rerank" and self.reranker is not None:
            head_size = max(head_size, self.config.rerank_top_n)
        fused = current_only(fused)
        head = load_hits(fused[:head_size], embeddings=request.diversity is not None)
        timings["load_ms"] = _ms(clock)
        notes: dict[str, str] = {}
        if request.mode == "hybrid+rerank":
            clock = time.perf_counter()
            head, notes = rerank(
                request.text,
                head,
                self.reranker,
                reason=self.reranker_reason,
                top_n=self.config.rerank_top_n,
            )
            timings["rerank_ms"] = _ms(clock)
        if request.diversity is not None:
            head = diversify.select(head, request.diversity, request.limit)
        return RetrievalResult(hits=head[: request.limit], notes=notes, timings_ms=timings)


def retrieve(request: RetrievalRequest) -> RetrievalResult:
    """One query through a process-wide ``Retriever`` built from settings."""
    return default_retriever().retrieve(request)


_DEFAULT: dict[str, Retriever] = {}


def default_retriever() -> Retriever:
    key = f"{settings.EMBEDDING_MODEL}|{settings.RERANKER_MODEL}"
    if key not in _DEFAULT:
        _DEFAULT.clear()
        _DEFAULT[key] = Retriever.from_settings()
    return _DEFAULT[key]


def default_diversity() -> DiversityConfig:
    return DiversityConfig(
        mmr_lambda=float(getattr(settings, "RETRIEVAL_MMR_LAMBDA", 0.7)),
        per_source=int(getattr(settings, "RETRIEVAL_PER_SOURCE", 2)),
        per_cluster=int(getattr(settings, "RETRIEVAL_PER_CLUSTER", 3)),
    )


# --- SQL ---------------------------------------------------------------------------

DENSE_SQL = """
SELECT ps.id AS passage_id, ps.source_id, 1.0::float8 - (ps.embedding <=> %(vec{i})s::vector)
       AS score
  FROM ledger_passage ps
 WHERE ps.embedding IS NOT NULL AND ps.kind = ANY(%(kinds)s) AND {filter}
 ORDER BY ps.embedding <=> %(vec{i})s::vector
 LIMIT %(k)s
"""


def filter_sql(
    filters: Filters, column: str = "ps.source_id", *, hashed: bool = False
) -> tuple[str, dict[str, Any]]:
    """A condition on a source id column, as a semi-join or (``hashed``) a hashed sub-plan.

    The dense scan and BM25's filter check (``sparse_index.bm25_top_k``) meet ~100–200
    rows: one index probe each costs less than hashing every source of a large library on
    every query. The hashed form suits a statement that checks every posting, like the
    SQL scan ``sparse_index.bm25_sql`` (the tests' reference): ``(x IN (SELECT …)) IS
    TRUE`` keeps Postgres from probing the library index once per posting.
    """
    conditions: list[str] = []
    params: dict[str, Any] = {}
    opening, closing = ("(", ") IS TRUE") if hashed else ("", "")
    if filters.library_ids:
        conditions.append(
            f"{opening}{column} IN (SELECT source_id FROM ledger_source_libraries"
            f" WHERE library_id = ANY(%(libraries)s)){closing}"
        )
        params["libraries"] = list(filters.library_ids)
    source_conditions = []
    if filters.source_types:
        source_conditions.append("source_type = ANY(%(source_types)s)")
        params["source_types"] = list(filters.source_types)
    if filters.published_after:
        source_conditions.append("published_date >= %(after)s")
        params["after"] = filters.published_after
    if filters.published_before:
        source_conditions.append("published_date <= %(before)s")
        params["before"] = filters.published_before
    if source_conditions:
        conditions.append(
            f"{opening}{column} IN (SELECT id FROM ledger_source WHERE "
            + " AND ".join(source_conditions)
            + f"){closing}"
        )
    return " AND ".join(conditions), params


def _vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def _variant_of(name: str) -> int:
    return int(name.rsplit(":", 1)[1]) if ":" in name else 0


def _rank(
    rows: list[tuple[Any, ...]], specs: list[_Spec], lists: dict[str, list[RetrieverHit]]
) -> dict[str, list[RetrieverHit]]:
    grouped: dict[int, list[tuple[int, int, float]]] = {}
    for spec_index, passage_id, source_id, score in rows:
        grouped.setdefault(spec_index, []).append((passage_id, source_id, float(score)))
    for spec_index, items in grouped.items():
        items.sort(key=lambda t: (-t[2], t[0]))
        lists[specs[spec_index].name] = [
            RetrieverHit(pid, rank, score, sid) for rank, (pid, sid, score) in enumerate(items, 1)
        ]
    return lists


_DETAILS = """
SELECT p.id, p.snapshot_id, p.source_id, p.kind, p.start, p."end", p.section_path, p.text,
       p.fingerprint, s.canonical_id, s.cluster, s.source_type, s.published_date, s.title,
       s.metadata, CASE WHEN %(embeddings)s THEN vector_send(p.embedding) END
  FROM ledger_passage p JOIN ledger_source s ON s.id = p.source_id
 WHERE p.id = ANY(%(ids)s)
"""


SUPERSEDED_SQL = """
SELECT p.id FROM ledger_passage p
  JOIN ledger_snapshot s ON s.id = p.snapshot_id
 WHERE p.id = ANY(%(ids)s)
   AND EXISTS (SELECT 1 FROM ledger_snapshot n WHERE n.source_id = s.source_id
                  AND (n.fetched_at, n.id) > (s.fetched_at, s.id))
"""


def current_only(hits: list[Hit]) -> list[Hit]:
    """The hits on each source's latest snapshot: a source ingested again keeps its old
    snapshot's passages (earlier runs' evidence points at them), but a search finds what
    the source says now (else the old text crowds the new one out of the per-source caps)."""
    if not hits:
        return hits
    with connection.cursor() as cursor:
        cursor.execute(SUPERSEDED_SQL, {"ids": [h.passage_id for h in hits]})
        stale = {row[0] for row in cursor.fetchall()}
    return [h for h in hits if h.passage_id not in stale] if stale else hits


def load_hits(hits: Sequence[Hit], *, embeddings: bool = False) -> list[Hit]:
    """The hits with their passage and source fields filled (order kept; one query)."""
    if not hits:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_DETAILS, {"ids": [h.passage_id for h in hits], "embeddings": embeddings})
        rows = {row[0]: row for row in cursor.fetchall()}
    out = []
    for hit in hits:
        row = rows.get(hit.passage_id)
        if row is not None:
            out.append(_filled(hit, row))
    return out


def _filled(hit: Hit, row: tuple[Any, ...]) -> Hit:
    (_, snapshot_id, source_id, kind, start, end, section_path, text, fingerprint) = row[:9]
    (canonical_id, cluster, source_type, published, title, metadata, blob) = row[9:]
    return replace(
        hit,
        snapshot_id=snapshot_id,
        source_id=source_id,
        kind=kind,
        start=start,
        end=end,
        section_path=section_path,
        text=text,
        fingerprint=fingerprint,
        canonical_id=canonical_id,
        cluster=cluster,
        source_type=source_type,
        published_date=published,
        title=title,
        metadata=(json.loads(metadata) if isinstance(metadata, str) else metadata) or {},
        embedding=_vector_from_binary(blob),
    )


def _vector_from_binary(blob: bytes | memoryview | None) -> np.ndarray | None:
    """pgvector's binary form: uint16 dim, uint16 unused, dim big-endian float4."""
    if blob is None:
        return None
    data = bytes(blob)
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


_POOL: list[ThreadPoolExecutor] = []


def _encoder_pool() -> ThreadPoolExecutor:
    """One thread that encodes queries, so the BM25 statement runs meanwhile (2 cores)."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-encoder"))
    return _POOL[0]


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Encode a short query on ``count`` torch threads, then restore the process setting.

    One query is too small to split across cores: on the shared 2-core machine a query
    took ~60 ms on one thread and ~380 ms on two (threads spin-waiting for a busy core).
    """
    if count <= 0:
        yield
        return
    import torch

    before = torch.get_num_threads()
    if before != count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        if before != count:
            torch.set_num_threads(before)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
