"""Benchmark the production retrieval path on a BEIR corpus (contract in DESIGN.md).

    python manage.py bench_retrieval --beir ../shared/data/scifact-beir --split train --mode all

Ingests the corpus through the ingest service (only documents whose snapshot text hash is
not stored yet), syncs the BM25 index, then runs every query of the split through
``research.retrieval.Retriever`` at document level (a document = its best passage) and
prints ``ndcg@10``, ``recall@100``, ``mrr@10``, ``latency_p50_ms``, ``latency_p95_ms``.
``--mode all`` measures bm25, dense and hybrid (and hybrid+rerank when a reranker loads)
in one run, prefixing each line with the mode; the unprefixed lines are the production
default. Latency is the wall time of one ``retrieve()`` call: encoding the query, the SQL
round trips, fusion and loading the hits.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from research.pipeline.retrieve.records import MODES, Filters, Mode, RetrievalRequest

KEYS = ("ndcg@10", "recall@100", "mrr@10", "latency_p50_ms", "latency_p95_ms")
DEFAULT_MODE = "hybrid+rerank"  # the production path: without a model it says so, fused order


class Command(BaseCommand):
    help = "nDCG@10 / Recall@100 / MRR@10 and latency of the production retrieval path."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--beir", type=Path, required=True, help="BEIR folder")
        parser.add_argument("--split", choices=("train", "test", "dev"), default="test")
        parser.add_argument("--mode", choices=(*MODES, "all"), default=DEFAULT_MODE)
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument("--limit", type=int, default=0, help="first N queries only")
        parser.add_argument("--corpus-name", default="", help="library / corpus name")
        parser.add_argument("--kinds", default="chunk", help="passage kinds to search")
        parser.add_argument("--reranker", default=None, help="model name or path override")
        parser.add_argument("--no-ingest", action="store_true", help="use what is stored")
        parser.add_argument(
            "--candidates", type=int, default=0, help="passages per list (RETRIEVAL_CANDIDATES)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.providers.embedder import configure_threads

        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        configure_threads()
        directory: Path = opts["beir"]
        queries, qrels = self._load(directory, opts["split"], opts["limit"])
        library = self._corpus(directory, opts["corpus_name"], opts["no_ingest"])
        doc_ids = _doc_ids(library.pk)
        retriever = self._retriever(opts["reranker"])
        filters = Filters(
            library_ids=(library.pk,),
            passage_kinds=tuple(k.strip() for k in opts["kinds"].split(",") if k.strip()),
        )
        modes = self._modes(opts["mode"], retriever)
        opts["candidates"] = opts["candidates"] or settings.RETRIEVAL_CANDIDATES
        results = {}
        for mode in modes:
            results[mode] = run_mode(
                retriever, mode, queries, qrels, doc_ids, filters, opts["candidates"]
            )
            self.stderr.write(f"{mode}: {results[mode]['figures']}")
        self._print(results, opts["mode"], retriever)
        if opts["json"]:
            self._write_json(opts, results, retriever, len(doc_ids), filters)

    # --- steps ---------------------------------------------------------------------

    def _load(
        self, directory: Path, split: str, limit: int
    ) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
        from research.pipeline.retrieve.beir import load_qrels, load_queries

        try:
            queries, qrels = load_queries(directory), load_qrels(directory, split)
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        ids = [q for q in queries if q in qrels]
        ids = ids[:limit] if limit else ids
        if not ids:
            raise CommandError(f"no queries of split {split!r} in {directory}")
        return {q: queries[q] for q in ids}, {q: qrels[q] for q in ids}

    def _corpus(self, directory: Path, corpus_name: str, no_ingest: bool) -> Any:
        from ledger.models import Library
        from ledger.services.sparse_index import sync_sparse_index

        library = (
            Library.objects.filter(name=corpus_name or _name(directory)).first()
            if no_ingest
            else ensure_corpus(directory, corpus_name, self.stderr.write)
        )
        if library is None:
            raise CommandError("no such library: run without --no-ingest")
        started = time.perf_counter()
        report = sync_sparse_index(library)
        if report.indexed:
            took = time.perf_counter() - started
            self.stderr.write(f"bm25 index: {report.indexed} passages in {took:.1f} s")
        return library

    def _retriever(self, reranker_name: str | None) -> Any:
        from research.providers.reranker import load_reranker
        from research.retrieval import Retriever

        retriever = Retriever.from_settings()
        if reranker_name is not None:
            retriever.reranker, retriever.reranker_reason = load_reranker(reranker_name)
        return retriever

    def _modes(self, mode: str, retriever: Any) -> list[str]:
        if mode != "all":
            return [mode]
        modes = ["bm25", "dense", "hybrid"]
        return modes + ["hybrid+rerank"] if retriever.reranker is not None else modes

    def _print(self, results: dict[str, Any], mode: str, retriever: Any) -> None:
        if mode == "all":
            for name, result in results.items():
                for key in KEYS:
                    self.stdout.write(f"{name}.{key}: {result['figures'][key]}")
            main = "hybrid+rerank" if "hybrid+rerank" in results else "hybrid"
        else:
            main = mode
        for key in KEYS:
            self.stdout.write(f"{key}: {results[main]['figures'][key]}")
        self.stdout.write(f"queries: {results[main]['queries']}")
        if main.endswith("rerank") or mode == "all":
            self.stdout.write(f"reranker_loaded: {int(retriever.reranker is not None)}")
        if retriever.reranker is None:
            self.stderr.write(f"reranker: none ({retriever.reranker_reason})")

    def _write_json(
        self, opts: dict[str, Any], results: dict[str, Any], retriever: Any, docs: int, f: Any
    ) -> None:
        main = opts["mode"] if opts["mode"] != "all" else "hybrid"
        payload = {
            **results[main]["figures"],
            "queries": results[main]["queries"],
            "split": opts["split"],
            "mode": opts["mode"],
            "modes": {name: r["figures"] for name, r in results.items()},
            "notes": {name: r["notes"] for name, r in results.items()},
            "documents": docs,
            "passage_kinds": list(f.passage_kinds),
            "config": {
                "rrf_k": retriever.config.rrf_k,
                "hnsw_ef_search": retriever.config.ef_search,
                "bm25_k1": retriever.config.bm25.k1,
                "bm25_b": retriever.config.bm25.b,
                "identifier_weight": retriever.config.identifier_weight,
                "candidates_per_list": opts["candidates"],
                "embedder": retriever.embedder.label if retriever.embedder else "",
                "reranker": getattr(retriever.reranker, "label", "none"),
                "reranker_reason": retriever.reranker_reason,
            },
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "per_query": {name: r["per_query"] for name, r in results.items()},
        }
        opts["json"].write_text(json.dumps(payload, indent=1))


def _name(directory: Path) -> str:
    from ledger.services.corpus import default_corpus_name

    return default_corpus_name(directory)


def ensure_corpus(directory: Path, corpus_name: str, log: Any) -> Any:
    """The corpus's library, ingesting only documents whose text hash is not stored yet."""
    from ledger.models import Snapshot
    from ledger.services.corpus import corpus_path, read_corpus
    from ledger.services.library import do_import_corpus, get_or_create_library

    path = corpus_path(directory)
    name = corpus_name or _name(directory)
    docs = list(read_corpus(path, name))
    library = get_or_create_library(name)
    stored = set(
        Snapshot.objects.filter(
            source__canonical_id__in=[d.canonical_id for d in docs],
            source__libraries=library,
        ).values_list("source__canonical_id", "text_sha256")
    )
    missing = [d for d in docs if (d.canonical_id, _text_sha(d)) not in stored]
    log(f"{name}: {len(docs)} documents, {len(docs) - len(missing)} already ingested")
    if missing:
        do_import_corpus(missing, library.name)
    return library


def _text_sha(doc: Any) -> str:
    text = doc.extracted.text if doc.extracted is not None else ""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _doc_ids(library_id: int) -> dict[int, str]:
    from ledger.models import Source

    rows = Source.objects.filter(libraries=library_id).values_list("pk", "metadata")
    return {pk: str((meta or {}).get("doc_id", pk)) for pk, meta in rows}


def run_mode(
    retriever: Any,
    mode: str,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    doc_ids: dict[int, str],
    filters: Filters,
    candidates: int = 100,
) -> dict[str, Any]:
    """Every query through ``retrieve()`` at document level; metrics and latency."""
    from research.pipeline.retrieve.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k

    def request(text: str) -> RetrievalRequest:
        return RetrievalRequest(
            text=text,
            mode=cast(Mode, mode),
            limit=100,
            candidates=candidates,
            level="document",
            filters=filters,
        )

    retriever.retrieve(request("warm-up query"))  # loads the encoder; not timed
    latencies, ndcg, recall, mrr, per_query = [], [], [], [], {}
    notes: dict[str, str] = {}
    for qid, text in queries.items():
        started = time.perf_counter()
        result = retriever.retrieve(request(text))
        latencies.append((time.perf_counter() - started) * 1000.0)
        notes = result.notes or notes
        ranked = [doc_ids.get(h.source_id, str(h.source_id)) for h in result.hits]
        ndcg.append(ndcg_at_k(ranked, qrels[qid], 10))
        recall.append(recall_at_k(ranked, qrels[qid], 100))
        mrr.append(mrr_at_k(ranked, qrels[qid], 10))
        per_query[qid] = {"ndcg@10": round(ndcg[-1], 4), "top10": ranked[:10]}
    n = len(queries)
    figures = {
        "ndcg@10": round(sum(ndcg) / n, 4),
        "recall@100": round(sum(recall) / n, 4),
        "mrr@10": round(sum(mrr) / n, 4),
        "latency_p50_ms": round(percentile(latencies, 50), 2),
        "latency_p95_ms": round(percentile(latencies, 95), 2),
    }
    return {"figures": figures, "queries": n, "notes": notes, "per_query": per_query}
