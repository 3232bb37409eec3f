"""A source ingested again: its old snapshot's passages stay (earlier evidence points at
them) but a search returns what the source says now."""

from __future__ import annotations

import pytest

from ledger.models import Passage, Snapshot
from ledger.services.ingest import ingest_documents
from ledger.services.sparse_index import sync_sparse_index
from research.pipeline.retrieve.records import DiversityConfig, Filters, Mode, RetrievalRequest
from research.retrieval import RetrievalConfig, Retriever
from tests.reports.library import ABSTRACTS, ingest_long_library
from tests.research.fixtures import fixture_document

pytestmark = pytest.mark.django_db
LIBRARY = "re-ingested"
QUERY = "daily vitamin D3 and calcium reduced the incidence of hip fractures percent"


def search(library, mode: Mode, diversity: DiversityConfig | None = None):
    request = RetrievalRequest(
        text=QUERY,
        mode=mode,
        limit=10,
        filters=Filters(library_ids=(library.pk,), passage_kinds=("chunk", "section")),
        diversity=diversity,
    )
    return Retriever(config=RetrievalConfig(rrf_k=60, ef_search=100)).retrieve(request)


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_it_finds_only_the_latest_snapshot_of_a_re_ingested_source(mode):
    library = ingest_long_library(LIBRARY)
    title, body = ABSTRACTS[0]
    before = search(library, mode)
    first = [h for h in before.hits if h.canonical_id == f"corpus:{LIBRARY}:1"]
    assert first, "the trial is found before the edit"
    [result] = ingest_documents(
        [fixture_document(LIBRARY, 1, title, body.replace("by 43 percent", "by 29 percent"))],
        library,
    )
    assert result.status == "new_snapshot"
    sync_sparse_index()
    old = Snapshot.objects.get(pk=first[0].snapshot_id)
    new = Snapshot.objects.filter(source=old.source).latest()
    assert new.pk != old.pk
    assert Passage.objects.filter(snapshot=old).exists()  # kept for earlier evidence
    for diversity in (None, DiversityConfig(mmr_lambda=0.7, per_source=2, per_cluster=3)):
        after = search(library, mode, diversity)
        trial = [h for h in after.hits if h.source_id == old.source_id]
        assert trial and {h.snapshot_id for h in trial} == {new.pk}, diversity
        assert any("29 percent" in h.text for h in trial) or mode == "dense"
        assert not any("43 percent" in h.text for h in after.hits)
