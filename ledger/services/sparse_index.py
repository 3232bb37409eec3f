"""The BM25 index inside Postgres: keep it in step with the passages, and query it.

Why Postgres and not a BM25 library's file: web and workers may run on different
machines, and the index must change in the same transaction as the passages it covers.
Postings, document frequencies and collection statistics are ordinary tables (see
``ledger.models.Sparse*``); statement-level triggers keep df and N exact whatever deletes
a passage. Scoring is Lucene BM25 (k1 = 1.5, b = 0.75, the bm25s default), computed in one
SQL statement with the same analyzer as the index (``research.pipeline.retrieve.sparse``).
The measurements behind this choice are in docs/bench/retrieval.md.

``sync_sparse_index()`` is idempotent and incremental: it indexes the passages of the
configured kinds that are missing from the index (or whose fingerprint changed), and
nothing else. Ingest calls it after writing passages.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from ledger.models import Library
from research.pipeline.retrieve.sparse import BM25Params, term_frequencies

logger = logging.getLogger(__name__)

DEFAULT_KINDS = ("chunk", "section")
LOCK = "SELECT pg_advisory_xact_lock(hashtext('ledger_sparse_index'))"


@dataclass
class SparseSyncReport:
    indexed: int = 0  # passages (re)indexed by this call
    postings: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)


def indexed_kinds() -> tuple[str, ...]:
    """Passage kinds with a BM25 index (``BM25_PASSAGE_KINDS``, default chunk and section)."""
    kinds = getattr(settings, "BM25_PASSAGE_KINDS", DEFAULT_KINDS)
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",")]
    return tuple(k for k in kinds if k)


def index_text(title: str, section_path: str, text: str) -> str:
    """What BM25 reads for a passage: the same title/section context the encoder sees."""
    if title and section_path.startswith(title):
        section_path = section_path[len(title) :].lstrip(" >")
    return "\n".join(part for part in (title, section_path, text) if part)


_STALE = """
SELECT p.id FROM ledger_passage p
  LEFT JOIN ledger_sparsedocument d ON d.passage_id = p.id
 WHERE p.kind = ANY(%s) AND (d.passage_id IS NULL OR d.fingerprint <> p.fingerprint)
"""
_IN_LIBRARY = (
    " AND p.source_id IN (SELECT source_id FROM ledger_source_libraries WHERE library_id = %s)"
)
_ONLY_IDS = " AND p.id = ANY(%s)"
_LOAD = """
SELECT p.id, p.source_id, p.kind, p.fingerprint, s.title, p.section_path, p.text
  FROM ledger_passage p JOIN ledger_source s ON s.id = p.source_id
 WHERE p.id = ANY(%s) ORDER BY p.id
"""


def stale_passage_ids(
    kinds: Sequence[str], library: Library | None = None, passage_ids: Sequence[int] | None = None
) -> list[int]:
    sql, params = _STALE, list[Any]([list(kinds)])
    if library is not None:
        sql += _IN_LIBRARY
        params.append(library.pk)
    if passage_ids is not None:
        sql += _ONLY_IDS
        params.append(list(passage_ids))
    with connection.cursor() as cursor:
        cursor.execute(sql + " ORDER BY p.id", params)
        return [row[0] for row in cursor.fetchall()]


def sync_sparse_index(
    library: Library | None = None,
    *,
    passage_ids: Sequence[int] | None = None,
    kinds: Sequence[str] | None = None,
    batch_size: int = 2000,
) -> SparseSyncReport:
    """Index the passages missing from the BM25 index; safe to call any time, any number.

    1. find stale passages (of ``kinds``, optionally of one library or among given ids);
    2. per batch, in one transaction under the index lock: drop their old entries, analyze
       their text, COPY documents and postings (triggers update df and statistics).
    """
    kinds = tuple(kinds or indexed_kinds())
    report = SparseSyncReport()
    if not kinds:
        return report
    stale = stale_passage_ids(kinds, library, passage_ids)
    for start in range(0, len(stale), batch_size):
        _index_batch(stale[start : start + batch_size], report)
    if report.indexed:
        logger.debug("sparse index: %d passages, %d postings", report.indexed, report.postings)
    return report


def _index_batch(ids: list[int], report: SparseSyncReport) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(LOCK)
        cursor.execute("DELETE FROM ledger_sparsedocument WHERE passage_id = ANY(%s)", [ids])
        cursor.execute(_LOAD, [ids])
        rows = cursor.fetchall()
        documents: list[tuple[object, ...]] = []
        postings: list[tuple[object, ...]] = []
        for passage_id, source_id, kind, fingerprint, title, section_path, text in rows:
            tfs = term_frequencies(index_text(title, section_path, text))
            length = sum(tfs.values())
            documents.append((passage_id, kind, length, fingerprint))
            postings.extend(
                (kind, term, passage_id, tf, length, source_id) for term, tf in tfs.items()
            )
            report.by_kind[kind] = report.by_kind.get(kind, 0) + 1
        raw = cursor.cursor
        _copy(raw, "ledger_sparsedocument (passage_id, kind, length, fingerprint)", documents)
        _copy(raw, "ledger_sparseposting (kind, term, passage_id, tf, dl, source_id)", postings)
        report.indexed += len(documents)
        report.postings += len(postings)


def _copy(
    cursor: object, target: str, rows: Sequence[tuple[object, ...]] | Iterator[tuple[object, ...]]
) -> None:
    with cursor.copy(f"COPY {target} FROM STDIN") as copy:  # type: ignore[attr-defined]
        for row in rows:
            copy.write_row(row)


@dataclass(frozen=True)
class SparseStatus:
    kind: str
    documents: int
    avg_length: float
    terms: int


def sparse_status() -> list[SparseStatus]:
    """Per-kind size of the index (for admin pages and benchmarks)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.kind, s.documents, s.total_length,"
            " (SELECT count(*) FROM ledger_sparseterm t WHERE t.kind = s.kind AND t.df > 0)"
            " FROM ledger_sparsestats s ORDER BY s.kind"
        )
        return [
            SparseStatus(kind, n, (total / n) if n else 0.0, terms)
            for kind, n, total, terms in cursor.fetchall()
        ]


def bm25_sql(params: BM25Params, *, condition: str = "") -> str:
    """Top passages of one kind for analyzed query terms: ``(passage_id, source_id, score)``.

    Parameters: ``%(kind)s``, ``%(terms)s`` (text[]), ``%(k)s``, plus those of
    ``condition``, a filter on ``p.source_id`` (e.g. a hashed ``IN (SELECT …)``) applied
    to the postings before scoring, without joining them to their passages.
    """
    k1, b = float(params.k1), float(params.b)
    return f"""
      SELECT p.passage_id, p.source_id,
             SUM(w.idf * p.tf / (p.tf + {k1 * (1 - b)!r}::float8 + w.bl * p.dl)) AS score
        FROM (SELECT t.term,
                     ln(1.0::float8 + (s.documents - t.df + 0.5::float8) / (t.df + 0.5::float8))
                       * {k1 + 1!r}::float8 AS idf,
                     {k1 * b!r}::float8 * s.documents / s.total_length AS bl
                FROM ledger_sparseterm t JOIN ledger_sparsestats s ON s.kind = t.kind
               WHERE t.kind = %(kind)s AND t.term = ANY(%(terms)s) AND t.df > 0
                 AND s.documents > 0) w
        JOIN ledger_sparseposting p ON p.kind = %(kind)s AND p.term = w.term
       WHERE {condition or "TRUE"}
       GROUP BY p.passage_id, p.source_id
       ORDER BY score DESC, p.passage_id
       LIMIT %(k)s"""


OVERFETCH = 2  # a filtered query first ranks k * OVERFETCH passages of the whole index


def bm25_top_k(
    kind: str,
    terms: Sequence[str],
    k: int,
    *,
    condition: str = "",
    scan_condition: str = "",
    params: dict[str, Any] | None = None,
    bm25: BM25Params | None = None,
) -> list[tuple[int, int, float]]:
    """The exact k best passages of one kind for analyzed terms: ``(passage, source, score)``.

    A filter (``condition`` on ``p.source_id``, e.g. a plan's libraries) is applied to the
    ranking instead of to every posting read, because checking each posting cost as much
    as scoring it (a hashed set of all the library's sources, built per query):

    1. rank the whole index, k × ``OVERFETCH`` passages (no filter per posting);
    2. keep those whose source passes ``condition`` (one statement over their sources);
    3. when fewer than k are left and the ranking went on, the filter is narrow (a small
       library in a large index): rank again with ``scan_condition`` applied per posting.

    Either way the result is what scoring every posting of the filtered index returns. The
    aggregation gets enough ``work_mem`` to stay in memory (tens of thousands of groups).
    """
    bm25 = bm25 or BM25Params()
    values = {**(params or {}), "kind": kind, "terms": list(terms), "k": k * OVERFETCH}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute("SET LOCAL work_mem = '32MB'")
        cursor.execute(bm25_sql(bm25), values)
        ranked = [(int(r[0]), int(r[1]), float(r[2])) for r in cursor.fetchall()]
        if not condition:
            return ranked[:k]
        cursor.execute(
            f"SELECT p.source_id FROM unnest(%(sources)s::bigint[]) AS p(source_id)"
            f" WHERE {condition}",
            {**values, "sources": sorted({source for _, source, _ in ranked})},
        )
        allowed = {row[0] for row in cursor.fetchall()}
        kept = [row for row in ranked if row[1] in allowed]
        if len(kept) >= k or len(ranked) < k * OVERFETCH:
            return kept[:k]
        cursor.execute(bm25_sql(bm25, condition=scan_condition or condition), {**values, "k": k})
        return [(int(r[0]), int(r[1]), float(r[2])) for r in cursor.fetchall()]
