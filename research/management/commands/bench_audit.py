"""Benchmark the audit of imported reports on generated reports with known faults.

    python manage.py bench_audit --scifact ../shared/data/scifact --seed 1 \\
        --reports 20 --claims-per-report 10 --json .data/cache/bench_audit.json

Writes ``--reports`` reports of ``--claims-per-report`` sentences each, in the Markdown
open_deep_research writes, from SciFact train claims citing their gold abstracts, with
faults in known proportions (``--correct`` share, default 0.5; the rest split evenly over
wrong citation, contradicted claim, invented URL, overstated claim and missing citation),
seeded by ``--seed``. Each report is parsed by ``research.pipeline.audit.parse_report``,
each sentence's citation resolved to its abstract (an unknown id is unreadable, HTTP 404)
and judged by ``research.pipeline.audit.check.check_citation`` with the verify stage's
families, out-of-fold (each claim by the fold models that never saw it, as
``bench_verification --split train`` does). Prints the per-fault table (outcome counts,
caught, exact expected outcome), the false-flag rate and the coverage kept of the correct
claims, the parse (sentences recovered with their citation), the families, the machine,
the seed and the seconds taken; ``--json`` writes the same and every claim's outcome.
``--write-reports DIR`` also writes the generated Markdown (outside the repository).
Logic in ``research.bench.audit``.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPUs, CPU model, platform, load averages."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    return {
        "cpus": os.cpu_count() or 0,
        "cpu_model": model,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_avg": [round(v, 2) for v in os.getloadavg()],
    }


class Command(BaseCommand):
    help = "Catch rates per injected fault, false flags and coverage kept, for the audit."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scifact", type=Path, required=True)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--limit", type=int, default=0, help="first N train claims only")
        parser.add_argument("--reports", type=int, default=20)
        parser.add_argument("--claims-per-report", type=int, default=10)
        parser.add_argument(
            "--correct",
            type=float,
            default=0.5,
            help="share of correct claims; the rest split evenly over the five faults",
        )
        parser.add_argument("--json", type=Path, default=None)
        parser.add_argument("--write-reports", type=Path, default=None)
        parser.add_argument(
            "--cache", action="store_true", help="reuse the disk embedding cache (faster)"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        from research.bench import audit
        from research.bench.scifact import load_claims, load_corpus
        from research.pipeline.verify import default_config, verify_encoder
        from research.pipeline.verify.embedcache import EmbeddingCache
        from research.providers.embedder import configure_threads

        from .train_verifier import cache_dir

        if not 0 <= opts["correct"] <= 1:
            raise CommandError("--correct is a share between 0 and 1")
        start = machine()
        directory: Path = opts["scifact"]
        try:
            claims = load_claims(directory, "train")
            docs = load_corpus(directory)
        except FileNotFoundError as exc:
            raise CommandError(str(exc)) from exc
        claims = claims[: opts["limit"]] if opts["limit"] else claims
        rest = (1 - opts["correct"]) / (len(audit.FAULTS) - 1)
        shares = {f: opts["correct"] if f == audit.CORRECT else rest for f in audit.FAULTS}
        try:
            reports = audit.generate(
                claims,
                docs,
                seed=opts["seed"],
                reports=opts["reports"],
                per_report=opts["claims_per_report"],
                shares=shares,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if opts["write_reports"]:
            opts["write_reports"].mkdir(parents=True, exist_ok=True)
            for report in reports:
                path = opts["write_reports"] / f"report-{report.index + 1:03d}.md"
                path.write_text(report.markdown)

        configure_threads()
        embedder = verify_encoder()
        cache = EmbeddingCache(
            embedder.encode, cache_dir(embedder.label) if opts["cache"] else None
        )
        # The verify stage's families; the train split, so out-of-fold.
        config = default_config(cache.encode, out_of_fold=True)
        bench = audit.run_bench(reports, docs, claims, config, self._progress)
        figures = audit.score(bench.results)
        end = machine()

        for line in audit.table(figures):
            self.stdout.write(line)
        parse = figures["parse"]
        self.stdout.write(
            f"parse: {parse['recovered']} of {parse['sentences']} sentences recovered with "
            f"their citation ({parse['lost']} lost, {parse['citation_mismatch']} with "
            "another citation)"
        )
        for result in [r for r in bench.results if not r.recovered][:10]:
            self.stderr.write(
                f"not recovered ({result.fault}): {result.text!r} -> parsed as "
                f"{result.parsed_text or '(no sentence)'!r} citing {list(result.parsed_urls)}"
            )
        self.stdout.write(f"caught_rate_all_faults: {figures['caught_rate_all_faults']}")
        for key in ("false_flag_rate", "coverage_kept"):
            value = figures[key]
            self.stdout.write(f"{key}: {'n/a (no correct claims)' if value is None else value}")
        states = config.family_states()
        self.stdout.write(
            "families: " + "; ".join(f"{name} ({state})" for name, state in sorted(states.items()))
        )
        self.stdout.write("out_of_fold: 1")
        self.stdout.write(
            f"seed: {opts['seed']}  reports: {len(reports)}  claims: {figures['claims']}  "
            f"seconds: {bench.seconds:.1f}"
        )
        self.stdout.write(
            f"machine: {start['cpus']} CPUs, {start['cpu_model']}; load {start['load_avg'][0]}"
            f" -> {end['load_avg'][0]}"
        )
        if opts["json"]:
            payload = {
                **figures,
                "seed": opts["seed"],
                "reports": len(reports),
                "claims_per_report": opts["claims_per_report"],
                "shares": shares,
                "limit": opts["limit"],
                "seconds": round(bench.seconds, 1),
                "machine": {**start, "load_avg_end": end["load_avg"]},
                "families": states,
                "out_of_fold": True,
                "quorum": config.aggregate.quorum,
                "details": [r.to_json() for r in bench.results],
            }
            opts["json"].write_text(json.dumps(payload, indent=1))
        cache.save()

    def _progress(self, done: int, total: int) -> None:
        if done % 5 == 0 or done == total:
            self.stderr.write(f"... {done} of {total} reports")
