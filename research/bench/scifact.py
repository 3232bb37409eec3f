"""SciFact in its release format: loading, evidence items, grouped folds, label mapping.

Shared by ``train_verifier`` and ``bench_verification``. Folds are grouped by cited
abstract: claims that share a cited abstract are always in the same fold (many SciFact
claims are rewrites of one another over one abstract; random folds inflate scores).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from research.pipeline.text import passage_fingerprint
from research.pipeline.verify.records import EvidenceItem, PoolName, Status

LABEL_TO_STATUS = {"SUPPORT": Status.PASS, "CONTRADICT": Status.FAIL, "NEI": Status.UNCERTAIN}
CLASSES = ("SUPPORT", "CONTRADICT", "NEI")


@dataclass(frozen=True)
class SciFactDoc:
    doc_id: int
    title: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.title + "\n\n" + " ".join(self.sentences)

    def sentence_spans(self) -> tuple[tuple[int, int], ...]:
        spans = [(0, len(self.title))]
        cursor = len(self.title) + 2
        for sentence in self.sentences:
            spans.append((cursor, cursor + len(sentence)))
            cursor += len(sentence) + 1
        return tuple(spans)

    def item(self, pool: PoolName = PoolName.SUPPORT, score: float = 0.0) -> EvidenceItem:
        text = self.text
        return EvidenceItem(
            evidence_id=str(self.doc_id),
            text=text,
            fingerprint=passage_fingerprint(text),
            pool=pool,
            passage_id=str(self.doc_id),
            sentences=self.sentence_spans(),
            source_key=f"corpus:scifact:{self.doc_id}",
            cluster=f"corpus:scifact:{self.doc_id}",
            source_type="paper",
            title=self.title,
            score=score,
        )


@dataclass(frozen=True)
class SciFactClaim:
    claim_id: int
    text: str
    label: str  # SUPPORT, CONTRADICT or NEI (claim level)
    cited_doc_ids: tuple[int, ...]
    doc_labels: dict[int, str]  # cited doc -> SUPPORT / CONTRADICT / NEI
    rationales: dict[int, tuple[int, ...]]  # cited doc -> rationale sentence indices


def load_corpus(directory: Path) -> dict[int, SciFactDoc]:
    docs: dict[int, SciFactDoc] = {}
    with (directory / "corpus.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            docs[int(row["doc_id"])] = SciFactDoc(
                int(row["doc_id"]), row["title"].strip(), tuple(s.strip() for s in row["abstract"])
            )
    return docs


def load_claims(directory: Path, split: str) -> list[SciFactClaim]:
    path = directory / f"claims_{split}.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist (this copy of SciFact has no {split!r})")
    claims: list[SciFactClaim] = []
    with path.open() as handle:
        for line in handle:
            claims.append(_claim(json.loads(line)))
    return claims


def _claim(row: dict[str, object]) -> SciFactClaim:
    evidence = row.get("evidence") or {}
    assert isinstance(evidence, dict)
    doc_labels: dict[int, str] = {}
    rationales: dict[int, tuple[int, ...]] = {}
    for doc_id, sets in evidence.items():
        doc_labels[int(doc_id)] = sets[0]["label"]
        rationales[int(doc_id)] = tuple(sorted({i for s in sets for i in s["sentences"]}))
    labels = set(doc_labels.values())
    label = "NEI" if not labels else ("CONTRADICT" if "CONTRADICT" in labels else "SUPPORT")
    cited = tuple(int(d) for d in row.get("cited_doc_ids") or [])  # type: ignore[attr-defined]
    for doc_id in cited:
        doc_labels.setdefault(doc_id, "NEI")
    return SciFactClaim(
        int(str(row["id"])), str(row["claim"]), label, cited, doc_labels, rationales
    )


def grouped_folds(claims: list[SciFactClaim], k: int = 5, seed: int = 13) -> dict[int, int]:
    """claim id -> fold, claims sharing any cited abstract always in the same fold."""
    parent: dict[int, int] = {c.claim_id: c.claim_id for c in claims}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[int, int] = {}
    for claim in claims:
        for doc_id in claim.cited_doc_ids:
            if doc_id in owner:
                parent[find(claim.claim_id)] = find(owner[doc_id])
            else:
                owner[doc_id] = claim.claim_id
    groups: dict[int, list[int]] = {}
    for claim in claims:
        groups.setdefault(find(claim.claim_id), []).append(claim.claim_id)
    # Largest groups first, each to the currently smallest fold (ties by a seeded order).
    import random

    order = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    rng = random.Random(seed)
    rng.shuffle(order)
    order.sort(key=len, reverse=True)
    sizes = [0] * k
    folds: dict[int, int] = {}
    for group in order:
        fold = min(range(k), key=lambda f: (sizes[f], f))
        sizes[fold] += len(group)
        for claim_id in group:
            folds[claim_id] = fold
    return folds
