"""Benchmark the ledger page: render it for a run with many claims, print p50/p95 ms.

Creates a scratch plan and run (deleted afterwards unless ``--keep``), renders the
ledger through Django's test client (middleware, views, queries, templates — no network)
with a mix of filters, searches, sorts, pages and htmx partials, and prints one
``key: value`` line per figure.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import time
import zlib
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from ledger.models import (
    Claim,
    EvidenceLink,
    Passage,
    ReviewState,
    Snapshot,
    Source,
    Verdict,
)
from research.models import Plan, PlanVersion, Run

USERNAME = "bench-ledger"
SUBJECTS = ["Drug A", "Coffee", "Sleep loss", "Exercise", "Vitamin D", "Remote work", "Tariffs"]
VERBS = ["lowers", "raises", "does not change", "predicts", "is associated with", "reduces"]
OBJECTS = [
    "blood pressure",
    "memory recall",
    "productivity",
    "mortality in adults",
    "bone density",
    "consumer prices",
    "reaction time",
]
VARIANTS: list[tuple[str, dict[str, str], bool]] = [
    ("default", {}, False),
    ("page_20", {"page": "20"}, False),
    ("flagged", {"review": "flagged"}, False),
    ("blocking", {"review": "blocking"}, False),
    ("status_fail", {"status": "fail"}, False),
    ("search", {"q": "blood pressure"}, False),
    ("search_quote", {"q": "randomised trial"}, False),
    ("sort_support", {"sort": "support"}, False),
    ("subquestion", {"subquestion": "sq2"}, False),
    ("htmx_filter", {"status": "uncertain", "sort": "refute"}, True),
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Command(BaseCommand):
    help = "Render the ledger page for a run with N claims and print p50/p95 render ms."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--claims", type=int, default=2000)
        parser.add_argument("--rounds", type=int, default=10, help="Passes over all variants.")
        parser.add_argument("--json", dest="json_out", default="")
        parser.add_argument("--keep", action="store_true", help="Keep the scratch run.")

    def handle(self, *args: Any, **options: Any) -> None:
        user = scratch_user()
        run = build_run(user, options["claims"])
        try:
            figures = measure(user, run, options["rounds"])
        finally:
            if not options["keep"]:
                delete_run(run)
        for key, value in figures.items():
            if not isinstance(value, dict):
                self.stdout.write(f"{key}: {value}")
        if options["json_out"]:
            with open(options["json_out"], "w", encoding="utf-8") as out:
                json.dump(figures, out, indent=2)


def scratch_user() -> Any:
    user, _ = get_user_model().objects.get_or_create(username=USERNAME)
    user.groups.add(*Group.objects.filter(name="reviewer"))
    return user


def build_run(user: Any, count: int) -> Run:
    """A plan with five subquestions and a run holding ``count`` claims with evidence."""
    rng = random.Random(7)
    with transaction.atomic():
        plan = Plan.objects.create(owner=user, question="[bench] ledger rendering")
        content = {
            "subquestions": [
                {"key": f"sq{i}", "text": f"Bench subquestion {i}", "queries": []}
                for i in range(1, 6)
            ]
        }
        version = PlanVersion.create_next(plan, content, user, note="bench_ledger scratch")
        run = Run.objects.create(plan_version=version, state="awaiting_review", created_by=user)
        subs = list(version.subquestions.all())
        passages = _passages(rng, plan.code.hex, count // 10 + 1)
        claims = Claim.objects.bulk_create(_claim(run, subs, rng, i) for i in range(count))
        EvidenceLink.objects.bulk_create(_links(claims, passages, rng))
    return run


def _passages(rng: random.Random, tag: str, count: int) -> list[Passage]:
    passages = []
    for i in range(count):
        text = " ".join(
            f"In a randomised trial, {rng.choice(SUBJECTS)} {rng.choice(VERBS)} "
            f"{rng.choice(OBJECTS)} by {rng.randint(2, 40)} percent."
            for _ in range(6)
        )
        source = Source.objects.create(
            canonical_id=f"bench:{tag}:{i}", title=f"Bench source {i}", source_type="paper"
        )
        snapshot = Snapshot.objects.create(
            source=source,
            raw=zlib.compress(text.encode()),
            raw_sha256=sha(text),
            text=text,
            text_sha256=sha(text),
            fetched_at=timezone.now() - timedelta(days=i),
            extractor="bench",
        )
        passages.append(
            Passage.objects.create(
                snapshot=snapshot,
                source=source,
                start=0,
                end=len(text),
                text=text,
                fingerprint=sha(text),
            )
        )
    return passages


def _claim(run: Run, subs: list[Any], rng: random.Random, i: int) -> Claim:
    text = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (claim {i})."
    status = rng.choices([Verdict.PASS, Verdict.UNCERTAIN, Verdict.FAIL], weights=[60, 25, 15])[0]
    return Claim(
        run=run,
        subquestion=subs[i % len(subs)],
        text=text,
        fingerprint=sha(text.lower()),
        claim_type=rng.choice(["empirical", "causal", "numerical", "comparative"]),
        status=status,
        flags=["single-source"] if rng.random() < 0.2 else [],
        rationale="bench",
        disposition="kept",
        support_count=rng.randint(0, 6),
        refute_count=rng.randint(0, 3),
        independent_sources=rng.randint(0, 4),
        confidence=round(rng.random(), 2),
        review_state=rng.choice([ReviewState.UNREVIEWED] * 3 + [ReviewState.APPROVED]),
    )


def _links(claims: list[Claim], passages: list[Passage], rng: random.Random) -> list[EvidenceLink]:
    links = []
    for claim in claims:
        for pool in ("support", "refute"):
            passage = rng.choice(passages)
            end = passage.text.index(".") + 1
            links.append(
                EvidenceLink(
                    claim=claim,
                    passage=passage,
                    snapshot_id=passage.snapshot_id,
                    pool=pool,
                    relation="supports" if pool == "support" else "contradicts",
                    quote=passage.text[:end],
                    quote_start=0,
                    quote_end=end,
                    passage_fingerprint=passage.fingerprint,
                    score=round(rng.random(), 3),
                )
            )
    return links


def measure(user: Any, run: Run, rounds: int) -> dict[str, Any]:
    """Render every variant ``rounds`` times (after one warm-up pass); times in ms."""
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    url = reverse("review-show-ledger", args=[run.code])
    per_variant: dict[str, list[float]] = {name: [] for name, _, _ in VARIANTS}
    for round_no in range(rounds + 1):
        for name, params, htmx in VARIANTS:
            headers = {"HX-Request": "true"} if htmx else None
            start = time.perf_counter()
            response = client.get(url, params, secure=True, headers=headers)
            elapsed = (time.perf_counter() - start) * 1000
            if response.status_code != 200:
                raise RuntimeError(f"{name}: HTTP {response.status_code}")
            if round_no:
                per_variant[name].append(elapsed)
    every = [t for times in per_variant.values() for t in times]
    return {
        "claims": run.claims.count(),
        "requests": len(every),
        "ledger_p50_ms": round(statistics.median(every), 1),
        "ledger_p95_ms": round(percentile(every, 0.95), 1),
        "ledger_max_ms": round(max(every), 1),
        "variants": {
            name: {
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(percentile(times, 0.95), 1),
            }
            for name, times in per_variant.items()
        },
    }


def delete_run(run: Run) -> None:
    with transaction.atomic():
        plan = run.plan_version.plan
        snapshots = Snapshot.objects.filter(evidence__claim__run=run).distinct()
        source_ids = list(snapshots.values_list("source_id", flat=True))
        snapshot_ids = list(snapshots.values_list("pk", flat=True))
        run.claims.all().delete()
        Snapshot.objects.filter(pk__in=snapshot_ids).delete()
        Source.objects.filter(pk__in=source_ids).delete()
        run.delete()
        plan.delete()
