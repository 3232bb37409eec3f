"""Ingestion: the only writer of Source, Snapshot and Passage rows.

``ingest_documents(docs, library)`` takes captured documents (uploads, fetched pages,
corpus records) and, batch by batch:

1. prepares each document without the database: extraction (a failure becomes that
   document's result, the batch goes on), sha256 of raw bytes and text, canonical
   identity;
2. looks up which identities and contents are already stored (one query each):
   an identity with the same raw bytes or text is *unchanged* and reuses its snapshot,
   an identity with other content gets a *new snapshot* of the same Source, the same
   text under a derived identity (URL, file hash) is a *duplicate* of the stored Source;
   only new content is then chunked (sections and chunks) and MinHash-signed;
3. hands the batch's chunk texts (``title\\nsection\\ntext``) to the encoder thread, which
   encodes them in length-sorted batches while the previous batch is being written;
4. writes sources, snapshots, library membership and passages in one transaction,
   passages in a single ``INSERT … SELECT FROM unnest(…)``, then their BM25 postings
   (``sparse_index.sync_sparse_index``), so the batch is searchable at commit.

Section passages (the parent context of chunks) are stored and BM25-indexed but not
embedded: dense retrieval searches chunks. Every step is keyed by content hashes, so
running it twice adds nothing.

The per-document bounds (:class:`DocumentBounds`) hold while the work is done, not after
it: a large file is extracted in a child process killed at the deadline (``_extract``),
extraction stops keeping text past ``max_chars``, and chunking stops at the deadline or at
``max_passages + 1`` passages. One hostile file costs a batch at most ``max_seconds``, and
the memory its extraction took leaves with the child.
"""

from __future__ import annotations

import hashlib
import logging
import time
import zlib
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from django.db import connection, transaction
from django.utils import timezone

from ledger.models import Library, Source, SourceType
from ledger.services.sparse_index import pack_sparse_index, sync_sparse_index
from research.pipeline import neardup
from research.pipeline.chunking import ChunkConfig, PassageDraft, chunk_document
from research.pipeline.extract import (
    Extracted,
    ExtractionError,
    TooLong,
    extract,
    extract_isolated,
)

logger = logging.getLogger(__name__)

Status = Literal["added", "new_snapshot", "unchanged", "duplicate", "failed"]
# Raw files from this size on are extracted in a child process (see ``_extract``).
ISOLATE_FROM_BYTES = 64 * 1024


@dataclass(frozen=True)
class DocumentInput:
    """One captured document. ``raw`` is what was captured, byte for byte."""

    raw: bytes
    label: str = ""  # how results name it: a filename, URL or corpus doc id
    canonical_id: str = ""  # given for corpus docs; otherwise derived from url/doi/content
    filename: str = ""
    content_type: str = ""
    url: str = ""
    doi: str = ""
    arxiv_id: str = ""
    title: str = ""  # overrides the extracted title
    source_type: str = SourceType.FILE
    publisher: str = ""
    published_date: date | None = None
    authors: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    http_status: int | None = None
    http_headers: dict[str, str] = field(default_factory=dict)
    fetched_at: datetime | None = None
    extracted: Extracted | None = None  # already extracted (corpus records)


@dataclass
class IngestResult:
    label: str
    status: Status
    canonical_id: str = ""
    source_id: int | None = None
    snapshot_id: int | None = None
    passages: int = 0
    cluster: str = ""
    error_reason: str = ""
    error: str = ""


class IngestProgress:
    """Callback; every method does nothing by default."""

    def batch_done(self, done: int, total: int, results: Sequence[IngestResult]) -> None:
        return None


def remaining_seconds(done: int, total: int, elapsed_s: float) -> float | None:
    """Time left at the average rate so far; None until something is done (or no total)."""
    if done <= 0 or total <= 0 or elapsed_s <= 0:
        return None
    return max(0.0, (total - done) * elapsed_s / done)


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min`` (for progress lines and pages)."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


@dataclass(frozen=True)
class DocumentBounds:
    """Per-document limits: past one, the document fails with a reason, the batch goes on.

    Enforced while the document is worked on: extraction keeps no text past
    ``max_chars`` (it counts the rest), a large file's extraction is killed at
    ``max_seconds``, and chunking stops at ``max_passages + 1`` passages or when the
    seconds left to the document run out. The seconds spent are checked again after
    each step (a small file is extracted in this process, where nothing can stop it).
    """

    max_chars: int = 2_000_000
    max_passages: int = 5_000
    max_seconds: float = 120.0

    @classmethod
    def from_settings(cls) -> DocumentBounds:
        from django.conf import settings

        return cls(
            max_chars=settings.INGEST_MAX_CHARS,
            max_passages=settings.INGEST_MAX_PASSAGES,
            max_seconds=settings.INGEST_MAX_SECONDS,
        )


class OverBound(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class IngestTimings:
    """Where the time went (seconds); the benchmark reads it."""

    prepare_s: float = 0.0
    lookup_s: float = 0.0
    embed_s: float = 0.0  # inside the encoder (overlaps the others: it has its own thread)
    write_s: float = 0.0
    wait_s: float = 0.0  # the writer waiting for the encoder
    pack_s: float = 0.0  # folding the new BM25 postings into packed blocks, once at the end


@dataclass
class _Prepared:
    doc: DocumentInput
    result: IngestResult
    extracted: Extracted | None = None
    raw_sha: str = ""
    text_sha: str = ""
    drafts: list[PassageDraft] = field(default_factory=list)
    signature: neardup.Signature | None = None
    key: tuple[str, str] = ("", "")  # what makes two documents of a batch the same
    vectors: list[str | None] = field(default_factory=list)
    seconds: float = 0.0  # spent on this document so far (extraction, chunking)


def document_from_fetch(result: Any, **fields: Any) -> DocumentInput:
    """A ``research.providers.fetcher.FetchResult`` as a document, its HTTP charset kept."""
    content_type = result.content_type
    if result.charset:
        content_type += f"; charset={result.charset}"
    metadata = {"requested_url": result.requested_url, **fields.pop("metadata", {})}
    if result.redirect_chain:
        metadata["redirect_chain"] = list(result.redirect_chain)
    return DocumentInput(
        raw=result.body,
        label=fields.pop("label", result.requested_url),
        url=result.final_url,
        content_type=content_type,
        http_status=result.status,
        http_headers=dict(result.headers),
        fetched_at=result.fetched_at,
        metadata=metadata,
        **fields,
    )


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def ingest_documents(
    docs: Iterable[DocumentInput],
    library: Library | None = None,
    *,
    progress: IngestProgress | None = None,
    batch_size: int = 256,
    embedder: Any = None,
    chunk_cfg: ChunkConfig | None = None,
    timings: IngestTimings | None = None,
    total: int = 0,
    bounds: DocumentBounds | None = None,
) -> list[IngestResult]:
    """Ingest documents batch by batch; returns one result per input, in order.

    The encoder never waits for the database: batch *n* is encoded in a helper thread
    while batch *n − 1* is written (see ``_Pipeline``). Each batch's BM25 postings are
    written in its commit; they are folded into the packed blocks once, at the end
    (``sparse_index.pack_sparse_index``: folding after every batch rewrote the common terms
    ~10 times over a corpus import; the index is exact either way).
    """
    from research.providers.embedder import Embedder

    embedder = embedder or Embedder.from_settings()
    pipeline = _Pipeline(library, embedder, chunk_cfg, timings or IngestTimings())
    pipeline.progress = progress or IngestProgress()
    pipeline.total = total
    pipeline.bounds = bounds or DocumentBounds.from_settings()
    with pipeline:
        batch: list[DocumentInput] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_size:
                pipeline.push(batch)
                batch = []
        if batch:
            pipeline.push(batch)
    started = time.perf_counter()
    pack_sparse_index()
    pipeline.timings.pack_s += time.perf_counter() - started
    return pipeline.results


@dataclass
class _Batch:
    prepared: list[_Prepared]
    fresh: list[_Prepared]
    vectors: Future[list[str]]


class _Pipeline:
    """Prepare and classify batch *n*, hand its texts to the encoder, then write batch *n − 1*.

    1. ``push(batch)``: extraction, hashing (no database), then the lookups that classify
       the batch, then chunking and MinHash of the new content;
    2. the chunk texts go to a single encoder thread (encoding releases the GIL);
    3. meanwhile the previous batch, whose vectors are ready, is written in one
       transaction (rows, passages, BM25 postings);
    4. a batch that shares an identity or a text with the batch still in flight waits
       until that one is written, so classification always sees it.
    """

    def __init__(
        self,
        library: Library | None,
        embedder: Any,
        chunk_cfg: ChunkConfig | None,
        timings: IngestTimings,
    ) -> None:
        self.library, self.embedder, self.chunk_cfg, self.timings = (
            library,
            embedder,
            chunk_cfg,
            timings,
        )
        self.progress = IngestProgress()
        self.bounds = DocumentBounds()
        self.total = 0
        self.results: list[IngestResult] = []
        self.inflight: _Batch | None = None
        self.encoder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-encoder")

    def __enter__(self) -> _Pipeline:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            if error is None:
                self._flush()
        finally:
            self.encoder.shutdown(wait=True, cancel_futures=True)

    def push(self, docs: list[DocumentInput]) -> None:
        started = time.perf_counter()
        prepared = [_prepare(doc, self.bounds) for doc in docs]
        self.timings.prepare_s += time.perf_counter() - started
        if self.inflight is not None and _overlaps(self.inflight.prepared, prepared):
            self._flush()
        started = time.perf_counter()
        fresh = _classify(prepared)
        self.timings.lookup_s += time.perf_counter() - started
        started = time.perf_counter()
        for item in fresh:  # only content that will be stored is chunked and signed
            _analyze(item, self.chunk_cfg, self.bounds)
        fresh = [item for item in fresh if item.extracted is not None]  # not over a bound
        texts = _embedding_texts(fresh)
        self.timings.prepare_s += time.perf_counter() - started
        vectors = self.encoder.submit(self._encode, texts)
        self._flush()
        self.inflight = _Batch(prepared, fresh, vectors)

    def _encode(self, texts: list[str]) -> list[str]:
        started = time.perf_counter()
        try:
            vectors = self.embedder.encode(texts) if texts else []
        finally:
            self.timings.embed_s += time.perf_counter() - started
        return [_vector_literal(vector) for vector in vectors]

    def _flush(self) -> None:
        batch, self.inflight = self.inflight, None
        if batch is None:
            return
        started = time.perf_counter()
        literals = iter(batch.vectors.result())
        self.timings.wait_s += time.perf_counter() - started
        for item in batch.fresh:
            item.vectors = [next(literals) if d.kind == "chunk" else None for d in item.drafts]
        started = time.perf_counter()
        _write(batch.prepared, batch.fresh, self.library, self.embedder.label)
        self.timings.write_s += time.perf_counter() - started
        self.results += [item.result for item in batch.prepared]
        self.progress.batch_done(
            len(self.results), self.total, self.results[-len(batch.prepared) :]
        )


def _overlaps(inflight: list[_Prepared], batch: list[_Prepared]) -> bool:
    """Whether ``batch`` names an identity or a text of the batch still being encoded."""
    ids = {item.result.canonical_id for item in inflight if item.extracted is not None}
    texts = {item.text_sha for item in inflight if item.extracted is not None}
    return any(
        item.result.canonical_id in ids or item.text_sha in texts
        for item in batch
        if item.extracted is not None
    )


# --- 1. prepare ------------------------------------------------------------------------


def _prepare(doc: DocumentInput, bounds: DocumentBounds) -> _Prepared:
    label = doc.label or doc.filename or doc.url or doc.canonical_id
    item = _Prepared(doc, IngestResult(label, "failed"))
    started = time.perf_counter()
    try:
        extracted = doc.extracted or _extract(doc, bounds)
        item.seconds = time.perf_counter() - started
        _check_extracted(extracted, item.seconds, bounds)
        item.raw_sha = sha256_hex(doc.raw)
        item.result.canonical_id = doc.canonical_id or _identity(doc, item.raw_sha)
    except (ExtractionError, OverBound) as exc:
        item.result.error_reason, item.result.error = exc.reason, str(exc)
        return item
    except ValueError as exc:  # an invalid DOI / arXiv id given by the caller
        item.result.error_reason, item.result.error = "identity", str(exc)
        return item
    item.extracted = extracted
    item.text_sha = sha256_hex(extracted.text)
    return item


def _extract(doc: DocumentInput, bounds: DocumentBounds) -> Extracted:
    """Extract within the bounds: a file of ``ISOLATE_FROM_BYTES`` or more in a child process.

    The child is killed at ``max_seconds`` and takes the memory the parser used with it.
    A smaller file is extracted here: a child costs a fork, a temporary file and a copy of
    the result (tens of ms), which a test suite or a page fetch of small files would pay
    on every one, and the slowest input measured (unclosed ``<a>`` tags, about 33 s per MB
    for trafilatura on this project's 2-core machine) takes about 2 s at 64 KB.
    """
    options: dict[str, Any] = {
        "filename": doc.filename,
        "content_type": doc.content_type,
        "url": doc.url,
        "max_chars": bounds.max_chars,
    }
    if len(doc.raw) < ISOLATE_FROM_BYTES:
        return extract(doc.raw, **options)
    try:
        return extract_isolated(doc.raw, timeout_s=bounds.max_seconds, **options)
    except TimeoutError as exc:
        raise _stopped(bounds, "extracting") from exc


def _stopped(bounds: DocumentBounds, step: str) -> OverBound:
    return OverBound(
        "too_slow",
        f"{step} the document was stopped at {bounds.max_seconds:g} s, the most one document "
        "may take; nothing of it was stored",
    )


def _check_extracted(extracted: Extracted, seconds: float, bounds: DocumentBounds) -> None:
    if len(extracted.text) > bounds.max_chars:  # given already extracted (corpus records)
        raise TooLong(len(extracted.text), bounds.max_chars)
    _check_seconds(seconds, bounds, "extracting")


def _check_seconds(seconds: float, bounds: DocumentBounds, step: str) -> None:
    if seconds > bounds.max_seconds:
        raise OverBound(
            "too_slow",
            f"{step} the document took {seconds:.0f} s, over the {bounds.max_seconds:.0f} s "
            "one document may take; nothing of it was stored",
        )


def _analyze(item: _Prepared, chunk_cfg: ChunkConfig | None, bounds: DocumentBounds) -> None:
    """Chunk and sign new content; a document over a bound fails here, unstored.

    Chunking stops at ``max_passages + 1`` passages or when the document's seconds run out.
    """
    extracted = item.extracted
    assert extracted is not None
    started = time.perf_counter()
    deadline = time.monotonic() + bounds.max_seconds - item.seconds
    try:
        try:
            item.drafts = chunk_document(
                extracted.text,
                extracted.blocks,
                chunk_cfg,
                max_passages=bounds.max_passages,
                deadline=deadline,
            )
        except TimeoutError as exc:
            raise _stopped(bounds, "chunking") from exc
        finally:
            item.seconds += time.perf_counter() - started
        if len(item.drafts) > bounds.max_passages:
            raise OverBound(
                "too_many_passages",
                f"the document makes more than {bounds.max_passages:,} passages, the most one "
                "document may have; split it into smaller files",
            )
        started = time.perf_counter()
        item.signature = neardup.signature(extracted.text)
        item.seconds += time.perf_counter() - started
        _check_seconds(item.seconds, bounds, "chunking")
    except OverBound as exc:
        item.result.status, item.result.source_id = "failed", None
        item.result.error_reason, item.result.error = exc.reason, str(exc)
        item.extracted, item.drafts, item.signature = None, [], None


def _identity(doc: DocumentInput, raw_sha: str) -> str:
    from research.pipeline.identity import canonical_id

    return canonical_id(
        url=doc.url or None,
        doi=doc.doi or None,
        arxiv_id=doc.arxiv_id or None,
        content_sha256=raw_sha,
    )


# --- 2. classify -----------------------------------------------------------------------


# One writer at a time per identity (a transaction-scoped advisory lock on its hash).
IDENTITY_LOCK = "SELECT pg_advisory_xact_lock(hashtext('ledger_source_identity'), hashtext(%s))"


def _classify(prepared: list[_Prepared]) -> list[_Prepared]:
    """Mark unchanged and duplicate documents; return those needing a new snapshot.

    Unchanged: its identity already has a snapshot with the same raw bytes or the same
    text. Duplicate: an identity derived from URL or content whose exact text is stored
    under another Source (it becomes an alias of that Source), or a repeat within the
    batch. Explicit identities (corpus documents) never collapse into one another.
    """
    ok = [item for item in prepared if item.extracted is not None]
    rows = Source.objects.filter(
        canonical_id__in=sorted({item.result.canonical_id for item in ok})
    ).values_list("canonical_id", "id", "cluster")
    existing = {cid: (pk, cluster) for cid, pk, cluster in rows}
    by_raw = _snapshots_by_raw([pk for pk, _ in existing.values()], [i.raw_sha for i in ok])
    by_text = _snapshots_by_text([item.text_sha for item in ok])
    seen: set[tuple[str, str]] = set()
    fresh: list[_Prepared] = []
    for item in ok:
        result, derived = item.result, not item.doc.canonical_id
        source_id, result.cluster = existing.get(result.canonical_id, (None, ""))
        same_text = by_text.get(item.text_sha)
        snapshot_id = by_raw.get((source_id, item.raw_sha)) if source_id else None
        if snapshot_id is None and same_text and same_text[0] == source_id:
            snapshot_id = same_text[1]
        item.key = ("text", item.text_sha) if derived else (result.canonical_id, item.raw_sha)
        if snapshot_id is not None:
            result.status, result.source_id, result.snapshot_id = (
                "unchanged",
                source_id,
                snapshot_id,
            )
        elif derived and same_text is not None:
            result.status = "duplicate"
            result.source_id, result.snapshot_id, result.cluster = same_text
        elif item.key in seen:
            result.status = "duplicate"
        else:
            result.status = "new_snapshot" if source_id else "added"
            result.source_id = source_id
            seen.add(item.key)
            fresh.append(item)
    return fresh


def _snapshots_by_raw(source_ids: list[int], raw_shas: list[str]) -> dict[tuple[int, str], int]:
    if not source_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT source_id, raw_sha256, id FROM ledger_snapshot"
            " WHERE source_id = ANY(%s) AND raw_sha256 = ANY(%s)",
            [source_ids, raw_shas],
        )
        return {(row[0], row[1]): row[2] for row in cursor.fetchall()}


def _snapshots_by_text(text_shas: list[str]) -> dict[str, tuple[int, int, str]]:
    """The first stored snapshot of each text: ``{text_sha: (source, snapshot, cluster)}``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT ON (n.text_sha256) n.text_sha256, n.source_id, n.id, s.cluster"
            "  FROM ledger_snapshot n JOIN ledger_source s ON s.id = n.source_id"
            " WHERE n.text_sha256 = ANY(%s) ORDER BY n.text_sha256, n.id",
            [text_shas],
        )
        return {row[0]: (row[1], row[2], row[3]) for row in cursor.fetchall()}


# --- 3. embed --------------------------------------------------------------------------


def embedding_text(title: str, section_path: str, text: str) -> str:
    """What the encoder sees for a chunk: its title and section give it context."""
    if title and section_path.startswith(title):
        section_path = section_path[len(title) :].lstrip(" >")
    return "\n".join(part for part in (title, section_path, text) if part)


def _embedding_texts(fresh: list[_Prepared]) -> list[str]:
    """The chunk texts of the new content, in draft order (sections are not embedded)."""
    texts: list[str] = []
    for item in fresh:
        assert item.extracted is not None
        title = _title(item)
        for draft in item.drafts:
            if draft.kind == "chunk":
                body = item.extracted.text[draft.start : draft.end]
                texts.append(embedding_text(title, draft.section_path, body))
    return texts


def _vector_literal(vector: Any) -> str:
    values = vector.tolist()
    return "[" + ",".join(["%.8g"] * len(values)) % tuple(values) + "]"


# --- 4. write --------------------------------------------------------------------------


def _title(item: _Prepared) -> str:
    assert item.extracted is not None
    return item.doc.title or item.extracted.title or item.doc.filename or item.doc.url


@transaction.atomic
def _write(
    prepared: list[_Prepared], fresh: list[_Prepared], library: Library | None, model: str
) -> None:
    fresh = _hold_identities(fresh)
    new_sources = [item for item in fresh if item.result.source_id is None]
    _create_sources(new_sources)
    _create_snapshots(fresh)
    passage_ids = _insert_passages(fresh, model)
    if passage_ids:  # searchable by BM25 from the same commit on
        sync_sparse_index(passage_ids=passage_ids, pack=False)
    _resolve_duplicates(prepared, fresh)
    if library is not None:
        ids = {item.result.source_id for item in prepared if item.result.source_id}
        through = Source.libraries.through
        through.objects.bulk_create(
            [through(source_id=sid, library_id=library.pk) for sid in sorted(ids)],
            ignore_conflicts=True,
        )


def _hold_identities(fresh: list[_Prepared]) -> list[_Prepared]:
    """Hold each fresh document's identity until this transaction ends, then look again:
    what another ingest stored since :func:`_classify` looked (two uploads of one new file
    overlapping) is taken as stored, not inserted a second time. Returns what is still
    fresh. The locks are taken in one order (sorted ids), so two writers never deadlock."""
    ids = sorted({item.result.canonical_id for item in fresh})
    if not ids:
        return fresh
    with connection.cursor() as cursor:
        for cid in ids:
            cursor.execute(IDENTITY_LOCK, [cid])
    rows = Source.objects.filter(canonical_id__in=ids).values_list("canonical_id", "id", "cluster")
    stored = {cid: (pk, cluster) for cid, pk, cluster in rows}
    raws = _snapshots_by_raw([pk for pk, _ in stored.values()], [i.raw_sha for i in fresh])
    still: list[_Prepared] = []
    for item in fresh:
        result = item.result
        if result.source_id is None and result.canonical_id in stored:
            result.source_id, result.cluster = stored[result.canonical_id]
            result.status = "new_snapshot"
        snapshot_id = raws.get((result.source_id, item.raw_sha)) if result.source_id else None
        if snapshot_id is not None:
            result.status, result.snapshot_id = "unchanged", snapshot_id
        else:
            still.append(item)
    return still


def _create_sources(items: list[_Prepared]) -> None:
    if not items:
        return
    clusters = _clusters(items)
    rows = [_source_row(item, clusters[item.result.canonical_id]) for item in items]
    created = Source.objects.bulk_create(rows)
    for item, source in zip(items, created, strict=True):
        item.result.source_id = source.pk
        item.result.cluster = source.cluster


def _clusters(items: list[_Prepared]) -> dict[str, str]:
    signed = [(item.result.canonical_id, item.signature) for item in items if item.signature]
    keys = sorted({key for _, sig in signed for key in neardup.band_keys(sig)})
    known = [
        (cid, neardup.Signature.from_bytes(bytes(minhash or b"")), cluster)
        for cid, minhash, cluster in Source.objects.filter(lsh_bands__overlap=keys)
        .exclude(minhash=None)
        .order_by("pk")
        .values_list("canonical_id", "minhash", "cluster")
    ]
    return neardup.cluster(signed, known)


def _source_row(item: _Prepared, cluster: str) -> Source:
    doc, extracted = item.doc, item.extracted
    assert extracted is not None and item.signature is not None
    meta = extracted.metadata
    return Source(
        canonical_id=item.result.canonical_id,
        url=doc.url or meta.get("url", ""),
        doi=doc.doi,
        arxiv_id=doc.arxiv_id,
        title=_title(item)[:2000],
        publisher=(doc.publisher or meta.get("sitename", ""))[:300],
        authors=list(doc.authors) or ([meta["author"]] if meta.get("author") else []),
        source_type=doc.source_type,
        published_date=doc.published_date or _parse_date(meta.get("date", "")),
        cluster=cluster,
        minhash=item.signature.to_bytes(),
        lsh_bands=neardup.band_keys(item.signature),
        metadata=doc.metadata,
    )


def _parse_date(value: str) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def _create_snapshots(items: list[_Prepared]) -> None:
    from ledger.models import Snapshot

    now = timezone.now()
    rows = []
    for item in items:
        extracted = item.extracted
        assert extracted is not None and item.result.source_id is not None
        rows.append(
            Snapshot(
                source_id=item.result.source_id,
                raw=zlib.compress(item.doc.raw),
                raw_sha256=item.raw_sha,
                text=extracted.text,
                text_sha256=item.text_sha,
                content_type=(item.doc.content_type or extracted.content_type)[:120],
                fetched_at=item.doc.fetched_at or now,
                http_status=item.doc.http_status,
                http_headers=item.doc.http_headers,
                extractor=extracted.extractor,
                extractor_version=extracted.extractor_version,
                metadata=_snapshot_metadata(extracted),
            )
        )
    for item, snapshot in zip(items, Snapshot.objects.bulk_create(rows), strict=True):
        item.result.snapshot_id = snapshot.pk


def _snapshot_metadata(extracted: Extracted) -> dict[str, Any]:
    meta: dict[str, Any] = {**extracted.metadata, "kind": extracted.kind}
    if extracted.pages:
        meta["pages"] = [[p.page, p.start, p.end] for p in extracted.pages]
    return meta


_INSERT_PASSAGES = """
INSERT INTO ledger_passage (id, snapshot_id, source_id, parent_id, kind, ordinal,
    section_path, start, "end", page, text, sentences, fingerprint, embedding,
    embedding_model)
SELECT t.id, t.snapshot_id, t.source_id, t.parent_id, t.kind, t.ordinal, t.section_path,
       t.start, t."end", t.page, t.text, t.sentences::jsonb, t.fingerprint,
       t.embedding::vector, CASE WHEN t.embedding IS NULL THEN '' ELSE %s END
  FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::text[],
              %s::int[], %s::text[], %s::int[], %s::int[], %s::int[], %s::text[],
              %s::text[], %s::text[], %s::text[])
    AS t(id, snapshot_id, source_id, parent_id, kind, ordinal, section_path, start, "end",
         page, text, sentences, fingerprint, embedding)
"""


def _insert_passages(items: list[_Prepared], model: str) -> list[int]:
    count = sum(len(item.drafts) for item in items)
    if not count:
        return []
    ids = _allocate_ids(count)
    columns: list[list[Any]] = [[] for _ in range(14)]
    cursor_id = 0
    for item in items:
        first = ids[cursor_id]
        for draft, vector in zip(item.drafts, item.vectors, strict=True):
            row = _passage_row(item, draft, vector, ids[cursor_id], first)
            for column, value in zip(columns, row, strict=True):
                column.append(value)
            cursor_id += 1
        item.result.passages = len(item.drafts)
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_PASSAGES, [model, *columns])
    return ids


def _passage_row(
    item: _Prepared, draft: PassageDraft, vector: str | None, pk: int, first: int
) -> list[Any]:
    assert item.extracted is not None
    text = item.extracted.text[draft.start : draft.end]
    sentences = "[" + ",".join(f"[{s},{e}]" for s, e in draft.sentences) + "]"
    parent = first + draft.parent if draft.parent is not None else None
    return [
        pk,
        item.result.snapshot_id,
        item.result.source_id,
        parent,
        draft.kind,
        draft.ordinal,
        draft.section_path,
        draft.start,
        draft.end,
        draft.page,
        text,
        sentences,
        sha256_hex(text),
        vector,
    ]


def _allocate_ids(count: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence('ledger_passage', 'id'))"
            " FROM generate_series(1, %s)",
            [count],
        )
        return [row[0] for row in cursor.fetchall()]


def _resolve_duplicates(prepared: list[_Prepared], fresh: list[_Prepared]) -> None:
    """Point in-batch copies at their twin; record other identities as aliases."""
    made = {item.key: item.result for item in fresh}
    for item in prepared:
        result = item.result
        if result.status == "duplicate" and result.source_id is None:
            twin = made.get(item.key)
            if twin is None:  # its twin in this batch failed a bound: so does the copy
                failed = next(i.result for i in prepared if i.key == item.key)
                result.status, result.error_reason = "failed", failed.error_reason
                result.error = failed.error
                continue
            result.source_id, result.snapshot_id = twin.source_id, twin.snapshot_id
            result.cluster = twin.cluster
    aliases = sorted(
        {
            (item.result.source_id, item.result.canonical_id)
            for item in prepared
            if item.result.status == "duplicate" and not item.doc.canonical_id
        },
        key=str,
    )
    with connection.cursor() as cursor:
        for source_id, alias in aliases:
            if source_id is not None and alias:
                cursor.execute(_ADD_ALIAS, [alias, source_id, alias, alias])


_ADD_ALIAS = """
UPDATE ledger_source
   SET metadata = jsonb_set(metadata, '{aliases}',
                            COALESCE(metadata -> 'aliases', '[]'::jsonb) || to_jsonb(%s::text))
 WHERE id = %s AND canonical_id <> %s AND NOT COALESCE(metadata -> 'aliases', '[]'::jsonb) ? %s
"""


def summarize(results: Sequence[IngestResult]) -> dict[str, int]:
    """Counts per status plus passages written, for commands and task logs."""
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    counts["passages"] = sum(result.passages for result in results)
    return counts
