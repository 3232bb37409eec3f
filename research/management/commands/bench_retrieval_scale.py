"""How retrieval latency grows with corpus size, on a generated corpus of up to 200k passages.

    python manage.py bench_retrieval_scale --beir ../shared/data/scifact-beir \
        --sizes 20000,50000,100000,200000 --queries 200

Writes synthetic sources, snapshots and passages into a scratch library ("scratch:scale")
by bulk COPY (this is a load generator, not ingestion), with "random but realistic"
vectors and text: each passage belongs to one of 512 topics seeded by real corpus
abstracts; its vector is the topic's real all-MiniLM-L6-v2 embedding plus Gaussian noise
(cosine ~0.75 to the topic), its words mix the topic abstract's words with words drawn by
corpus frequency. Queries are the benchmark's real query texts, through the real path
(encoder, BM25 SQL, HNSW, fusion, loading) filtered to the scratch library.

The scratch rows are deleted at the end unless ``--keep``. They still share the HNSW and
BM25 tables of the database while they exist: run it against a scratch database
(``DATABASE_URL=…/evidence_scale``, migrated) to leave other work undisturbed.
Prints ``size_<n>.<mode>.latency_p50_ms`` / ``_p95_ms`` for hybrid, bm25 and dense per
size, and ``size_<n>.<mode>.cpu_ms_mean``: CPU per query of this process and its Postgres
backend (a local server), which unlike the latency does not grow with the machine's load.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection, transaction
from django.utils import timezone

from research.pipeline.retrieve.records import Filters, Mode, RetrievalRequest

SCRATCH = "scratch:scale"
TOPICS = 512
WARM_UP = 10  # queries per mode before the clock starts
WORD = re.compile(r"(?u)\b\w\w+\b")


class Command(BaseCommand):
    help = "Retrieval latency at growing corpus sizes (generated passages, scratch library)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--beir", type=Path, required=True, help="vocabulary and queries")
        parser.add_argument("--sizes", default="20000,50000,100000,200000")
        parser.add_argument("--queries", type=int, default=200)
        parser.add_argument("--seed", type=int, default=13)
        parser.add_argument("--keep", action="store_true", help="keep the scratch rows")
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument("--plot", type=Path, default=None, help="SVG of latency by size")
        parser.add_argument(
            "--merge",
            type=Path,
            action="append",
            default=[],
            help="--json of an earlier run whose sizes join this one's in --json and --plot",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        from ledger.services.library import get_or_create_library
        from research.providers.embedder import configure_threads

        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        configure_threads()
        sizes = sorted(int(s) for s in opts["sizes"].split(",") if s.strip())
        generator = Generator(opts["beir"], opts["seed"])
        queries = generator.queries[: opts["queries"]]
        library = get_or_create_library(SCRATCH)
        figures: dict[str, float] = {}
        try:
            stored = _count(library.pk)
            for size in sizes:
                self._grow(generator, library.pk, stored, size)
                stored = max(stored, size)
                figures.update(self._measure(library.pk, size, queries))
        finally:
            if not opts["keep"]:
                self.stderr.write("removing the scratch library …")
                delete_scratch(library.pk)
        for earlier in opts["merge"]:
            merged = json.loads(earlier.read_text())
            sizes = sorted(set(sizes) | set(merged.pop("sizes", [])))
            figures = {**merged, **figures}
        if opts["json"]:
            opts["json"].write_text(json.dumps({**figures, "sizes": sizes}, indent=1))
        if opts["plot"]:
            opts["plot"].write_text(growth_svg(figures, sizes), encoding="utf-8")

    def _grow(self, generator: Generator, library_id: int, stored: int, size: int) -> None:
        from ledger.services.sparse_index import pack_sparse_index, sync_sparse_index

        started = time.perf_counter()
        for first in range(stored, size, 10_000):
            write_passages(generator, library_id, first, min(size, first + 10_000))
        written = time.perf_counter() - started
        report = sync_sparse_index(kinds=("chunk",), pack=False)
        indexed = time.perf_counter() - started - written
        packed = pack_sparse_index(("chunk",))
        packing = time.perf_counter() - started - written - indexed
        self.stderr.write(
            f"size {size}: wrote {size - stored} passages in {written:.0f} s,"
            f" bm25 indexed {report.indexed} in {indexed:.0f} s, packed {packed.terms} terms"
            f" ({packed.postings} postings) in {packing:.0f} s"
        )
        with connection.cursor() as cursor:
            # autovacuum's steady state: statistics, and the visibility map index-only scans
            # need (VACUUM cannot run inside a transaction, e.g. the tests')
            verb = "ANALYZE" if connection.in_atomic_block else "VACUUM ANALYZE"
            for table in ("ledger_passage", "ledger_sparseposting", "ledger_sparseblock"):
                cursor.execute(f"{verb} {table}")

    def _measure(self, library_id: int, size: int, queries: list[str]) -> dict[str, float]:
        """Each query through each mode in turn (hybrid, bm25, dense), after a warm-up.

        Interleaved, so a cache still cold after a growth step, or a burst of load from
        other processes, falls on all three modes alike instead of on whichever ran first.
        """
        from research.pipeline.retrieve.metrics import percentile
        from research.retrieval import Retriever

        retriever = Retriever.from_settings()
        filters = Filters(library_ids=(library_id,))
        modes: tuple[Mode, ...] = ("hybrid", "bm25", "dense")
        latencies: dict[str, list[float]] = {mode: [] for mode in modes}
        cpu: dict[str, list[float]] = {mode: [] for mode in modes}
        for text in queries[:WARM_UP]:
            for mode in modes:
                retriever.retrieve(RetrievalRequest(text=text, mode=mode, filters=filters))
        backend = _backend_pid()
        for text in queries:
            for mode in modes:
                request = RetrievalRequest(text=text, mode=mode, filters=filters)
                server = _cpu_seconds(backend)
                process = time.process_time()
                started = time.perf_counter()
                retriever.retrieve(request)
                latencies[mode].append((time.perf_counter() - started) * 1000.0)
                used = time.process_time() - process
                if server is not None:
                    used += (_cpu_seconds(backend) or server) - server
                cpu[mode].append(used * 1000.0)
        out = {f"size_{size}.load_avg": round(os.getloadavg()[0], 2)}
        for mode in modes:
            for q, label in ((50, "p50"), (95, "p95")):
                key = f"size_{size}.{mode}.latency_{label}_ms"
                out[key] = round(percentile(latencies[mode], q), 2)
                self.stdout.write(f"{key}: {out[key]}")
            # CPU per query (this process, all threads, + its Postgres backend when local):
            # what a query costs whatever the load of the machine (the clock ticks are
            # 10 ms, so only the mean over all queries is meaningful)
            key = f"size_{size}.{mode}.cpu_ms_mean"
            out[key] = round(sum(cpu[mode]) / max(1, len(cpu[mode])), 2)
            self.stdout.write(f"{key}: {out[key]}")
        self.stdout.write(f"size_{size}.load_avg: {out[f'size_{size}.load_avg']}")
        return out


class Generator:
    """Topic-mixture passages: text and vector both drawn around one of 512 real topics."""

    def __init__(self, beir: Path, seed: int) -> None:
        from research.pipeline.retrieve.beir import load_queries
        from research.providers.embedder import Embedder

        self.rng = np.random.default_rng(seed)
        abstracts = []
        with (beir / "corpus.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                abstracts.append(f"{record.get('title', '')} {record.get('text', '')}")
        counts: Counter[str] = Counter()
        for text in abstracts:
            counts.update(WORD.findall(text.lower()))
        self.words = np.array(list(counts))
        freq = np.array(list(counts.values()), dtype=np.float64)
        self.cdf = np.cumsum(freq / freq.sum())
        self.topics = min(TOPICS, len(abstracts))
        picks = self.rng.choice(len(abstracts), size=self.topics, replace=False)
        self.topic_words = [WORD.findall(abstracts[i].lower()) for i in picks]
        self.centroids = Embedder.from_settings().encode([abstracts[i][:1000] for i in picks])
        self.queries = list(load_queries(beir).values())

    def passage(self, index: int) -> tuple[str, str, np.ndarray]:
        rng = np.random.default_rng(index)
        topic = int(rng.integers(self.topics))
        length = int(rng.integers(60, 140))
        own = self.topic_words[topic]
        n_own = length * 3 // 10
        words = [own[i] for i in rng.integers(len(own), size=n_own)]
        drawn = np.searchsorted(self.cdf, rng.random(length - n_own) * self.cdf[-1])
        words += list(self.words[np.minimum(drawn, len(self.words) - 1)])
        rng.shuffle(words)
        vector = self.centroids[topic] + rng.normal(0.0, 0.045, size=self.centroids.shape[1])
        vector = (vector / np.linalg.norm(vector)).astype(np.float32)
        title = f"Synthetic passage {index} on topic {topic}"
        return title, " ".join(words).capitalize() + ".", vector


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a local process (the Postgres backend), None if unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None  # a server on another machine: the process's own CPU only
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _count(library_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM ledger_passage p JOIN ledger_source_libraries l"
            " ON l.source_id = p.source_id WHERE l.library_id = %s",
            [library_id],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def write_passages(generator: Generator, library_id: int, first: int, last: int) -> None:
    """Sources, snapshots and one chunk passage each for indices [first, last), by COPY."""
    now = timezone.now()
    rows = [generator.passage(i) for i in range(first, last)]
    with transaction.atomic(), connection.cursor() as cursor:
        source_ids = _ids(cursor, "ledger_source", len(rows))
        snapshot_ids = _ids(cursor, "ledger_snapshot", len(rows))
        passage_ids = _ids(cursor, "ledger_passage", len(rows))
        raw = cursor.cursor
        with raw.copy(
            "COPY ledger_source (id, code, canonical_id, url, doi, arxiv_id, title, publisher,"
            " authors, source_type, cluster, lsh_bands, metadata, created_at) FROM STDIN"
        ) as copy:
            for i, (title, _text, _vec) in enumerate(rows):
                copy.write_row(
                    (source_ids[i], _uuid(), f"{SCRATCH}:{first + i}", "", "", "", title, "",
                     "[]", "other", "", "{}", "{}", now)
                )  # fmt: skip
        with raw.copy(
            "COPY ledger_snapshot (id, code, source_id, raw, raw_sha256, text, text_sha256,"
            " content_type, fetched_at, http_headers, extractor, extractor_version, metadata)"
            " FROM STDIN"
        ) as copy:
            for i, (_title, text, _vec) in enumerate(rows):
                sha = hashlib.sha256(text.encode()).hexdigest()
                copy.write_row(
                    (snapshot_ids[i], _uuid(), source_ids[i], zlib.compress(text.encode()), sha,
                     text, sha, "text/plain", now, "{}", "synthetic", "1", "{}")
                )  # fmt: skip
        with raw.copy(
            "COPY ledger_passage (id, snapshot_id, source_id, kind, ordinal, section_path,"
            ' start, "end", text, sentences, fingerprint, embedding, embedding_model)'
            " FROM STDIN"
        ) as copy:
            for i, (_title, text, vec) in enumerate(rows):
                copy.write_row(
                    (passage_ids[i], snapshot_ids[i], source_ids[i], "chunk", 0, "", 0, len(text),
                     text, "[]", hashlib.sha256(text.encode()).hexdigest(), _vector(vec),
                     "synthetic")
                )  # fmt: skip
        cursor.execute(
            "INSERT INTO ledger_source_libraries (source_id, library_id)"
            " SELECT unnest(%s::bigint[]), %s",
            [source_ids, library_id],
        )


def _ids(cursor: Any, table: str, count: int) -> list[int]:
    cursor.execute(
        f"SELECT nextval(pg_get_serial_sequence('{table}', 'id')) FROM generate_series(1, %s)",
        [count],
    )
    return [row[0] for row in cursor.fetchall()]


def _uuid() -> str:
    import uuid

    return str(uuid.uuid4())


def _vector(vec: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.5f}" for x in vec.tolist()) + "]"


def delete_scratch(library_id: int) -> None:
    """Remove the scratch rows (index entries first, so triggers keep statistics exact)."""
    from ledger.services.sparse_index import pack_sparse_index

    sources = (
        "SELECT source_id FROM ledger_source_libraries WHERE library_id = %(lib)s"
        " AND source_id IN (SELECT id FROM ledger_source WHERE canonical_id LIKE 'scratch:%%')"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE scratch_sources ON COMMIT DROP AS " + sources, {"lib": library_id}
        )
        for statement in (
            "DELETE FROM ledger_sparseposting WHERE passage_id IN (SELECT id FROM ledger_passage"
            " WHERE source_id IN (SELECT source_id FROM scratch_sources))",
            "DELETE FROM ledger_sparsedocument WHERE passage_id IN (SELECT id FROM"
            " ledger_passage WHERE source_id IN (SELECT source_id FROM scratch_sources))",
            "DELETE FROM ledger_passage WHERE source_id IN (SELECT source_id FROM scratch_sources)",
            "DELETE FROM ledger_snapshot WHERE source_id IN"
            " (SELECT source_id FROM scratch_sources)",
            "DELETE FROM ledger_source_libraries WHERE source_id IN"
            " (SELECT source_id FROM scratch_sources)",
            "DELETE FROM ledger_source WHERE id IN (SELECT source_id FROM scratch_sources)",
            "DELETE FROM ledger_library WHERE id = %(lib)s",
        ):
            cursor.execute(statement, {"lib": library_id})
    pack_sparse_index(due_only=False)  # fold the deleted postings out of the packed blocks


def growth_svg(figures: dict[str, float], sizes: list[int]) -> str:
    """Latency (p50 solid, p95 dashed) per mode against corpus size, as a small SVG."""
    width, height, left, bottom = 640, 400, 60, 50
    top = max([v for k, v in figures.items() if "latency" in k] + [1.0]) * 1.1
    colors = {"hybrid": "#1f5fbf", "bm25": "#c0392b", "dense": "#2e8b57"}

    def x(size: int) -> float:  # linear in size: a straight line is linear growth
        return left + (width - left - 30) * size / max(sizes)

    def y(ms: float) -> float:
        return height - bottom - (height - bottom - 20) * ms / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        ' font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}"'
        ' stroke="black"/>',
        f'<line x1="{left}" y1="20" x2="{left}" y2="{height - bottom}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle">passages</text>',
        f'<text x="15" y="{height / 2}" transform="rotate(-90 15 {height / 2})"'
        ' text-anchor="middle">latency ms</text>',
    ]
    for size in sizes:
        parts.append(
            f'<text x="{x(size)}" y="{height - bottom + 16}" text-anchor="middle">'
            f"{f'{size // 1000}k' if size >= 1000 else size}</text>"
        )
    step = next(n for n in (25, 50, 100, 250, 500, 1000, 10**9) if top / n <= 8)
    for tick in range(0, int(top) + 1, step):
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4}" text-anchor="end">{tick}</text>')
    for row, (mode, color) in enumerate(colors.items()):
        for label, dash in (("p50", ""), ("p95", ' stroke-dasharray="5,4"')):
            keys = [(s, f"size_{s}.{mode}.latency_{label}_ms") for s in sizes]
            points = " ".join(f"{x(s):.1f},{y(figures[k]):.1f}" for s, k in keys if k in figures)
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"{dash}/>'
            )
        parts.append(
            f'<text x="{left + 10}" y="{30 + 16 * row}" fill="{color}">'
            f"{mode} (p50 solid, p95 dashed)</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
