"""``bench_ingest_bounds --case html|text [--mb N] [--json OUT]``: how a hostile file is refused.

Issue 27 item 1. One hostile document goes through the production ingest path
(``ingest_documents``, bounds from settings unless ``--max-seconds`` / ``--max-chars`` are
given) followed, in the same batch, by one small document, into a fresh scratch database
(created and migrated before the clock starts, dropped afterwards):

- ``html``: ``<a>`` repeated, unclosed, inside one ``<body>`` (7.2 MB by default): a
  parse tree of millions of nested elements, minutes of work for the HTML extractor;
- ``text``: one-sentence paragraphs (24 MB by default), far over ``INGEST_MAX_CHARS``.

Printed: the hostile document's result, ``wall_s`` (the batch: the refusal, then the
small document stored), and the memory of this process (the worker): ``rss_before_mb``
(warm: encoder loaded, extractor imported), ``rss_peak_mb`` (VmHWM, reset before the
batch), ``rss_after_mb`` (after the batch and a ``gc.collect()``), plus
``children_peak_mb``: the largest resident size seen, sampled every 0.1 s, of any process
below this one (an extraction child). Run each case in its own invocation, so neither
inherits the other's memory. Linux only (``/proc``).

``--case child`` measures what isolation costs an ordinary file instead: the mean time
to extract an HTML page of ``--mb`` (0.1 by default) here and in a child, 20 rounds
alternated, the fork server already started (no database).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import threading
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from ledger.services.ingest import DocumentBounds, DocumentInput, ingest_documents

SCRATCH_DB = "bench_ingest_bounds_scratch"
# 73 characters, the length of the sentence the recorded figures were measured with.
SENTENCE = "The council approved the new budget after a long debate about bus fares. "


class Command(BaseCommand):
    help = "Measure time to refusal and worker memory for a hostile HTML or text file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--case", choices=("html", "text", "child"), required=True)
        parser.add_argument("--mb", type=float, default=0.0, help="7.2 (html) / 24 (text)")
        parser.add_argument("--max-seconds", type=float, default=None)
        parser.add_argument("--max-chars", type=int, default=None)
        parser.add_argument("--json", type=Path, default=None, help="Write figures here too")

    def handle(self, *args: Any, **options: Any) -> None:
        case = options["case"]
        if case == "child":
            self._print(_child_cost(int(options["mb"] * 1e6) or 100_000), options["json"])
            return
        mb = options["mb"] or (7.2 if case == "html" else 24.0)
        hostile = _hostile(case, mb)
        small = DocumentInput(raw=f"{time.time()} {SENTENCE}".encode(), label="small.txt")
        bounds = DocumentBounds.from_settings()
        bounds = DocumentBounds(
            max_chars=options["max_chars"] or bounds.max_chars,
            max_passages=bounds.max_passages,
            max_seconds=options["max_seconds"] or bounds.max_seconds,
        )
        embedder = _warm_embedder()
        old_name = _create_scratch_database()
        try:
            warm = DocumentInput(
                raw=b"<html><body><p>" + SENTENCE.encode() + b"</p>", label="w.html"
            )
            ingest_documents([warm], embedder=embedder, bounds=bounds)  # warm imports
            figures = _measure(hostile, small, embedder, bounds)
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
        figures.update(
            case=case,
            raw_mb=round(len(hostile.raw) / 1e6, 2),
            max_seconds=bounds.max_seconds,
            max_chars=bounds.max_chars,
            cpus=os.cpu_count() or 0,
            machine=platform.platform(),
        )
        self._print(figures, options["json"])

    def _print(self, figures: dict[str, Any], out: Path | None) -> None:
        for key, value in figures.items():
            self.stdout.write(f"{key}: {value}")
        if out is not None:
            out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


def _hostile(case: str, mb: float) -> DocumentInput:
    size = int(mb * 1e6)
    if case == "html":
        head = b"<html><body><p>Some words in a paragraph about nothing at all.</p>"
        raw = head + b"<a>" * ((size - len(head)) // 3)
        return DocumentInput(raw=raw, label="links.html", filename="links.html")
    paragraph = SENTENCE.strip() + "\n\n"
    raw = (paragraph * (size // len(paragraph) + 1)).encode()[:size]
    return DocumentInput(raw=raw, label="big.txt", filename="big.txt")


def _child_cost(size: int, rounds: int = 20) -> dict[str, Any]:
    """Mean seconds to extract an ordinary HTML page here and in a child (fork server warm)."""
    from research.pipeline.extract import extract, extract_isolated

    paragraph = f"<p>{SENTENCE}</p>\n"
    page = ("<html><body><article>" + paragraph * (size // len(paragraph))).encode()
    extract_isolated(page, timeout_s=600, filename="page.html")  # starts the fork server
    here = there = 0.0
    for _ in range(rounds):  # alternated, so a change of load falls on both
        started = time.perf_counter()
        extract(page, filename="page.html")
        here += time.perf_counter() - started
        started = time.perf_counter()
        extract_isolated(page, timeout_s=600, filename="page.html")
        there += time.perf_counter() - started
    return {
        "case": "child",
        "raw_kb": round(len(page) / 1000),
        "rounds": rounds,
        "in_process_ms": round(1000 * here / rounds, 1),
        "in_child_ms": round(1000 * there / rounds, 1),
        "load_avg": [round(value, 2) for value in os.getloadavg()],
        "cpus": os.cpu_count() or 0,
    }


def _measure(
    hostile: DocumentInput, small: DocumentInput, embedder: Any, bounds: DocumentBounds
) -> dict[str, Any]:
    gc.collect()
    before = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    sampler = _ChildSampler()
    sampler.start()
    started = time.perf_counter()
    results = ingest_documents([hostile, small], embedder=embedder, bounds=bounds)
    wall = time.perf_counter() - started
    sampler.stop()
    peak = _status_kb("VmHWM")
    gc.collect()
    after = _status_kb("VmRSS")
    return {
        "status": results[0].status,
        "error_reason": results[0].error_reason,
        "error": results[0].error,
        "next_document": results[1].status,
        "wall_s": round(wall, 1),
        "rss_before_mb": round(before / 1024),
        "rss_peak_mb": round(peak / 1024),
        "rss_after_mb": round(after / 1024),
        "children_peak_mb": round(sampler.peak_kb / 1024),
        "load_avg": [round(value, 2) for value in os.getloadavg()],
    }


def _status_kb(key: str, pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class _ChildSampler(threading.Thread):
    """The largest VmRSS of any descendant of this process, every 0.1 s."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kb = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.1):
            for pid in _descendants(os.getpid()):
                try:
                    self.peak_kb = max(self.peak_kb, _status_kb("VmRSS", pid))
                except OSError:
                    continue

    def stop(self) -> None:
        self.done.set()
        self.join()


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _warm_embedder() -> Any:
    from research.providers.embedder import Embedder

    embedder = Embedder.from_settings()
    embedder.encode(["warm up the model before the clock starts"])
    return embedder


def _create_scratch_database() -> str:
    """A fresh, migrated database; returns the previous name for ``destroy_test_db``."""
    old_name = str(connection.settings_dict["NAME"])
    connection.settings_dict.setdefault("TEST", {})["NAME"] = SCRATCH_DB
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    return old_name
