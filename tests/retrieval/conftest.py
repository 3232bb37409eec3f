"""A small corpus with real all-MiniLM-L6-v2 embeddings and a synced BM25 index."""

from __future__ import annotations

import datetime as dt

import pytest

from ledger.models import Passage
from ledger.services.sparse_index import index_text, sync_sparse_index
from tests.factories import make_library, make_passage, make_snapshot

# key: (title, text, source type, published)
CORPUS = {
    "r175h": (
        "Cohort sequencing appendix",
        "Sample 12 carried the TP53-R175H allele; consent forms and sequencing dates are"
        " listed in the appendix.",
        "paper",
        dt.date(2021, 3, 1),
    ),
    "hotspots": (
        "TP53 hotspot variants",
        "TP53-R175L and TP53-R175C are structural hotspot variants of the p53 DNA-binding domain.",
        "paper",
        dt.date(2019, 5, 1),
    ),
    "contact": (
        "TP53 hotspot variants",
        "TP53-R273H and TP53-R248Q are contact hotspot variants of the p53 DNA-binding domain.",
        "paper",
        dt.date(2018, 1, 1),
    ),
    "guardian": (
        "Guardian of the genome",
        "The p53 protein arrests the cell cycle after DNA damage.",
        "encyclopedia",
        dt.date(2015, 1, 1),
    ),
    "felines": (
        "Animal behaviour",
        "Felines slumber for most of the daytime, often sixteen hours.",
        "encyclopedia",
        dt.date(2020, 1, 1),
    ),
    "tea": ("Beverages", "Green tea contains catechins and caffeine.", "web", None),
    "release": (
        "Scheduler changelog",
        "Version v2.13.1 fixes the memory leak in the job scheduler.",
        "documentation",
        dt.date(2024, 6, 1),
    ),
    "release2": (
        "Scheduler changelog",
        "Versions v2.13.0 and v2.13.2 add retry options to the job scheduler.",
        "documentation",
        dt.date(2024, 2, 1),
    ),
    "bank": (
        "Finance",
        "Interest rates rose sharply after the central bank meeting.",
        "news",
        dt.date(2023, 9, 1),
    ),
}


@pytest.fixture
def corpus(db):
    """Passages keyed by name, embedded by the offline model, indexed for BM25."""
    from research.providers.embedder import Embedder

    library = make_library("fixture")
    passages = {}
    for key, (title, text, source_type, published) in CORPUS.items():
        snapshot = make_snapshot(text, title=title, canonical_id=f"corpus:fixture:{key}")
        source = snapshot.source
        source.source_type = source_type
        source.published_date = published
        source.metadata = {"corpus": "fixture", "doc_id": key}
        source.save(update_fields=["source_type", "published_date", "metadata"])
        source.libraries.add(library)
        passages[key] = make_passage(snapshot)
    vectors = Embedder().encode([index_text(p.source.title, "", p.text) for p in passages.values()])
    for passage, vector in zip(passages.values(), vectors, strict=True):
        Passage.objects.filter(pk=passage.pk).update(embedding=vector)
    sync_sparse_index()
    return passages
