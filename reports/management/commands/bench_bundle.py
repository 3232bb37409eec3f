"""``python manage.py bench_bundle [--size-mb 100] [--json OUT]``: verify_bundle's memory.

Writes a valid, signed bundle of about ``--size-mb`` MB (compressed) to a temporary file:
a report of 40 approved claims whose quotes and passages sit in snapshot texts of
random English-like words (deflate shrinks them about 2.2×, so a 100 MB bundle holds about
225 MB of text), signed with this instance's key. Then a fresh Python process runs
``verify_bundle`` on it and reports its peak resident memory next to the process's
memory before verifying. Prints ``bundle_mb``, ``uncompressed_mb``, ``problems``,
``verify_s``, ``baseline_rss_mb``, ``peak_rss_mb``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from reports.exports.bundle import build_bundle, to_json
from reports.exports.document import sha256_text
from reports.exports.records import (
    CheckAppendix,
    ClaimRow,
    DiffAppendix,
    EvidencePassage,
    EvidenceRow,
    Header,
    PlanAppendix,
    ReportDocument,
    SectionRow,
    SentenceRow,
)
from reports.signing import instance_private_key
from research.pipeline.text import claim_fingerprint

CLAIMS = 40
WORDS = [
    "vitamin",
    "fracture",
    "trial",
    "placebo",
    "women",
    "older",
    "adults",
    "dose",
    "risk",
    "calcium",
    "serum",
    "cohort",
    "falls",
    "bone",
    "muscle",
    "balance",
    "annual",
    "daily",
]
CHILD = """
import os, sys, time, django

def hwm():  # peak resident set (kB) since the last reset; ru_maxrss survives fork + exec
    with open("/proc/self/status") as status:
        return int(next(l for l in status if l.startswith("VmHWM")).split()[1])

with open("/proc/self/clear_refs", "w") as refs:
    refs.write("5")  # reset the peak inherited from the parent
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from reports.exports.verify import verify_bundle
from reports.signing import signing_public_key
key = signing_public_key()
base = hwm()
start = time.perf_counter()
problems = verify_bundle(sys.argv[1], key)
took = time.perf_counter() - start
print(len(problems), took, base, hwm(), problems[:3])
"""


class Command(BaseCommand):
    help = "Peak memory of verify_bundle on a large signed bundle (default 100 MB)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--size-mb", type=float, default=100.0)
        parser.add_argument("--json", help="also write the figures here")

    def handle(self, *args: Any, **options: Any) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "bundle.zip"
            text_mb = write_bundle(path, options["size_mb"])
            bundle_mb = path.stat().st_size / 1e6
            figures = {"bundle_mb": round(bundle_mb, 1), "uncompressed_mb": round(text_mb, 1)}
            figures |= measure(path)
        for key, value in figures.items():
            self.stdout.write(f"{key}: {value}")
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(figures, indent=2) + "\n")


def measure(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split(maxsplit=4)
    return {
        "problems": int(out[0]),
        "verify_s": round(float(out[1]), 2),
        "baseline_rss_mb": round(int(out[2]) / 1024, 1),
        "peak_rss_mb": round(int(out[3]) / 1024, 1),
    }


def write_bundle(path: Path, size_mb: float) -> float:
    """A valid signed bundle; returns the snapshot text size in MB."""
    rng = random.Random(7)
    letters = "abcdefghijklmnoprstuvw"
    vocab = WORDS + ["".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(4000)]
    per_claim = int(size_mb * 2.25e6 / CLAIMS)
    snapshots, rows, claims = [], [], []
    for n in range(1, CLAIMS + 1):
        claim_text = f"Claim {n}: vitamin D supplementation lowered falls in cohort {n}."
        head = f"Abstract {n}. {claim_text} "
        body = " ".join(rng.choices(vocab, k=per_claim // 7))
        text = head + body
        sha = sha256_text(text)
        snapshots.append(
            {"code": f"s{n}", "canonical_id": f"bench:{n}", "text_sha256": sha, "text": text}
        )
        code = f"00000000-0000-0000-0000-{n:012d}"
        start = text.index(claim_text)
        rows.append(_row(n, code, claim_text, text, sha, start))
        claims.append(_claim(n, code, claim_text))
    document = _document(claims, rows)
    markdown = "# Bench\n"
    files = {
        "report/report.md": markdown.encode(),
        "report/report.json": to_json(document.to_json()),
        "claims.json": to_json(_claims_json(document)),
        "evidence.json": to_json([r.model_dump(mode="json") for r in rows]),
    }
    report = {"code": "bench", "version": 1, "title": "Bench"}
    report["content_hash"] = sha256_text(markdown)
    path.write_bytes(
        build_bundle(files=files, snapshots=snapshots, report=report, key=instance_private_key())
    )
    return sum(len(s["text"]) for s in snapshots) / 1e6


def _row(n: int, code: str, quote: str, text: str, sha: str, start: int) -> EvidenceRow:
    passages = [(0, min(len(text), 1000), "chunk"), (0, len(text), "section")]
    return EvidenceRow(
        label=f"E{n}",
        claim=f"C{n}",
        claim_code=code,
        claim_fingerprint=claim_fingerprint(quote),
        quote=quote,
        quote_start=start,
        quote_end=start + len(quote),
        relation="supports",
        source=n,
        canonical_id=f"bench:{n}",
        published_date="",
        snapshot_code=f"s{n}",
        snapshot_sha256=sha,
        fetched_at="2026-01-01T00:00:00+00:00",
        passages=[
            EvidencePassage(
                link_id=2 * n + i,
                pool="support",
                kind=kind,
                passage_start=a,
                passage_end=b,
                passage_fingerprint=sha256_text(text[a:b]),
                passage_sha256=sha256_text(text[a:b]),
            )
            for i, (a, b, kind) in enumerate(passages)
        ],
    )


def _claim(n: int, code: str, text: str) -> ClaimRow:
    return ClaimRow(
        label=f"C{n}",
        code=code,
        text=text,
        fingerprint=claim_fingerprint(text),
        status="pass",
        review_state="approved",
        claim_type="empirical",
        subquestion="s1",
        allowed_scope="",
        limitations="",
        confidence=0.9,
        evidence=[f"E{n}"],
    )


def _document(claims: list[ClaimRow], rows: list[EvidenceRow]) -> ReportDocument:
    sentences = [
        SentenceRow(text=c.text, claims=[c.label], claim_codes=[c.code], citations=[n])
        for n, c in enumerate(claims, 1)
    ]
    return ReportDocument(
        header=Header(
            title="Bench",
            report_version=1,
            plan_code="p",
            plan_version=1,
            plan_version_hash="h",
            run_code="r",
            run_config_hash="c",
            synthesizer="extractive",
            created_by="bench",
            created_at="2026-01-01T00:00:00+00:00",
        ),
        outline=[],
        sections=[SectionRow(key="s1", title="Bench", mode="extractive", sentences=sentences)],
        claims=claims,
        bibliography=[],
        appendix_a=[],
        appendix_a_set_aside=[],
        appendix_b=rows,
        appendix_c=[],
        appendix_d=PlanAppendix(
            question="Bench",
            scope="",
            constraints={},
            plan_version=1,
            plan_version_hash="h",
            subquestions=[],
            run_code="r",
            run_state="done",
            run_config={},
            run_config_hash="c",
            run_started_at="",
            run_finished_at="",
            stages=[],
            method=[],
        ),
        appendix_e=DiffAppendix(),
        check=CheckAppendix(synthesizer="extractive", findings=[]),
    )


def _claims_json(document: ReportDocument) -> dict[str, Any]:
    approved = [
        c.model_dump(mode="json")
        | {
            "decisions": [
                {
                    "at": "2026-01-01T00:00:00+00:00",
                    "reviewer": "bench",
                    "action": "approve",
                    "claim": c.label,
                    "claim_code": c.code,
                    "claim_version": 1,
                    "reason_code": "",
                    "reason": "",
                    "text_changed": False,
                    "text_after_sha256": sha256_text(c.text),
                    "carried_from": "",
                }
            ],
            "last_action": "approve",
        }
        for c in document.claims
    ]
    return {"approved": approved, "excluded": [], "set_aside_at_mining": []}
