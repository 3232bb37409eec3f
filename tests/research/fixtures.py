"""A small library about vitamin D and fractures, ingested through the real ingest service."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import Count, QuerySet

from ledger.models import Library, SearchHit

if TYPE_CHECKING:
    from ledger.services.ingest import DocumentInput
    from research.models import Run

DOCUMENTS = [
    (
        "Vitamin D and calcium in older women",
        "In a randomized controlled trial of 3,270 older women living in nursing homes, daily "
        "vitamin D3 and calcium supplementation reduced the incidence of hip fractures by "
        "43 percent over 18 months. Nonvertebral fractures were also reduced.",
    ),
    (
        "High-dose annual vitamin D and falls",
        "A single annual oral dose of 500,000 IU cholecalciferol given to older women increased "
        "the risk of falls and fractures compared with placebo. High-dose vitamin D was not "
        "protective and may be harmful.",
    ),
    (
        "Meta-analysis of vitamin D supplementation and fracture risk",
        "This meta-analysis of randomized trials in community-dwelling older adults found that "
        "vitamin D supplementation alone did not reduce the risk of hip fracture or total "
        "fracture. Vitamin D combined with calcium reduced fracture risk modestly.",
    ),
    (
        "Vitamin D receptor and bone mineralization",
        "Vitamin D increases intestinal calcium absorption through the vitamin D receptor, which "
        "supports bone mineralization. Deficiency causes osteomalacia and secondary "
        "hyperparathyroidism, raising fracture risk in older adults.",
    ),
    (
        "Serum 25-hydroxyvitamin D and fracture in a cohort",
        "In a prospective cohort of 9,000 adults aged over 65, low serum 25-hydroxyvitamin D "
        "concentrations were associated with a higher incidence of hip fractures during ten years "
        "of follow-up.",
    ),
    (
        "Monthly vitamin D in the VITAL-style trial",
        "Among healthy midlife and older adults not selected for deficiency, vitamin D3 "
        "supplementation at 2,000 IU per day did not result in a significantly lower risk of "
        "fractures than placebo over 5 years.",
    ),
    (
        "Dose and regimen of vitamin D supplements",
        "Daily doses of 800 to 1,000 IU of vitamin D are recommended for older adults; "
        "intermittent very high doses are discouraged. Adherence and baseline deficiency "
        "modify the effect on bone outcomes.",
    ),
    (
        "Exercise programs and falls in older adults",
        "Group and home-based exercise programs reduced the rate of falls in older people "
        "living in the community. Balance training was the most effective component.",
    ),
    (
        "Hip fracture epidemiology",
        "Hip fractures in older adults cause substantial mortality and loss of independence. "
        "Incidence rises steeply with age and is higher in women than in men.",
    ),
    (
        "Calcium supplements and cardiovascular events",
        "Calcium supplementation without coadministered vitamin D was associated with an increased "
        "risk of myocardial infarction in a meta-analysis, raising concern about its safety.",
    ),
    (
        "Vitamin D and muscle strength",
        "Vitamin D supplementation improved muscle strength and balance in deficient older adults, "
        "a possible mechanism for fewer falls and fractures.",
    ),
    (
        "History of vitamin D discovery",
        "Vitamin D was identified in the early twentieth century as the factor that cures rickets. "
        "Cod liver oil and sunlight exposure were early treatments.",
    ),
]


def fixture_document(library: str, n: int, title: str, body: str) -> DocumentInput:
    """Fixture document ``n`` of ``library`` as the ingest service takes it (text/plain)."""
    from ledger.services.ingest import DocumentInput

    return DocumentInput(
        raw=f"{title}\n\n{body}".encode(),
        label=title,
        canonical_id=f"corpus:{library}:{n}",
        content_type="text/plain; charset=utf-8",
        title=title,
        source_type="paper",
    )


def duplicate_hits(run: Run) -> QuerySet[SearchHit, dict[str, Any]]:
    """The run's search hits recorded more than once (same query text, adapter and rank)."""
    return (
        SearchHit.objects.filter(run=run)
        .values("query_text", "adapter", "rank")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )


def ingest_fixture_library(name: str = "fixture-vitamin-d") -> Library:
    """Ingest the fixture documents into a library (embeddings and BM25 index included)."""
    from ledger.services.ingest import ingest_documents
    from ledger.services.sparse_index import sync_sparse_index

    library, _ = Library.objects.get_or_create(name=name, owner=None, defaults={"public": True})
    docs = [fixture_document(name, n, title, body) for n, (title, body) in enumerate(DOCUMENTS, 1)]
    results = ingest_documents(docs, library)
    assert all(r.status != "failed" for r in results), [r.error for r in results]
    sync_sparse_index(library)
    return library
