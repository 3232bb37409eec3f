"""The ingest pipeline: the encoder works on batch n while batch n − 1 is written."""

from __future__ import annotations

import json
import threading
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from ledger.models import Library, Passage, SparseDocument, Upload
from ledger.services.ingest import (
    DocumentInput,
    IngestProgress,
    format_duration,
    ingest_documents,
    remaining_seconds,
)
from research.providers.embedder import Embedder

pytestmark = pytest.mark.django_db

ABSTRACTS = [
    (
        "Vitamin D and falls in older adults",
        "Falls are a leading cause of injury in adults over 65. In this randomized trial, "
        "2,256 community-dwelling women received 500,000 IU of cholecalciferol or placebo "
        "once a year for three to five years. Women in the vitamin D group had 15% more "
        "falls (incidence rate ratio 1.15) and 26% more fractures than women given placebo.",
    ),
    (
        "Calcium, vitamin D and hip fracture",
        "We pooled eleven double-blind trials of oral vitamin D with or without calcium in "
        "31,022 persons aged 65 or older. High-dose supplementation (at least 800 IU daily) "
        "reduced hip fracture by 30% and any nonvertebral fracture by 14%.",
    ),
    (
        "Caffeine and sleep",
        "Caffeine taken zero, three or six hours before bed reduced total sleep time; even "
        "six hours before bed it reduced sleep by more than one hour as measured objectively.",
    ),
    (
        "Exercise and falls",
        "Group and home-based exercise programmes reduced the rate of falls in older people "
        "living in the community (rate ratio 0.71) in a meta-analysis of 59 trials.",
    ),
]


def _doc(i: int, *, canonical: bool = True, url: str = "", body: str = "") -> DocumentInput:
    title, text = ABSTRACTS[i % len(ABSTRACTS)]
    return DocumentInput(
        raw=f"{title}\n\n{body or text}".encode(),
        label=title,
        canonical_id=f"corpus:pipeline:{i}" if canonical else "",
        url=url,
        content_type="text/plain; charset=utf-8",
        title=title,
        source_type="paper",
    )


class _Recorder:
    """The real encoder, recording calls; ``fail_on`` makes that call (1-based) raise."""

    def __init__(self, fail_on: int = 0) -> None:
        self.inner = Embedder.from_settings()
        self.label = self.inner.label
        self.calls = 0
        self.fail_on = fail_on
        self.second_started = threading.Event()

    def encode(self, texts):
        self.calls += 1
        if self.calls == 2:
            self.second_started.set()
        if self.calls == self.fail_on:
            raise RuntimeError("encoder crashed")
        return self.inner.encode(texts)


def test_it_encodes_the_next_batch_while_writing_the_previous():
    embedder = _Recorder()
    overlapped = []

    class WaitForEncoder(IngestProgress):
        def batch_done(self, done, total, results):
            if done == 1:  # batch 1 is committed: batch 2 must already be encoding
                overlapped.append(embedder.second_started.wait(timeout=20))

    results = ingest_documents(
        [_doc(0), _doc(1), _doc(2)], batch_size=1, embedder=embedder, progress=WaitForEncoder()
    )

    assert overlapped == [True]
    assert [r.status for r in results] == ["added", "added", "added"]
    assert embedder.calls == 3


def test_it_sees_what_the_batch_still_being_encoded_will_write():
    copy = _doc(0, canonical=False, url="https://example.org/copy-of-0")
    again = _doc(0, canonical=False, url="https://example.org/another-copy")
    revised = _doc(1, body="A revised abstract: high-dose vitamin D reduced hip fracture by 30%.")

    results = ingest_documents([copy, again, _doc(1), revised], batch_size=1)

    assert [r.status for r in results] == ["added", "duplicate", "added", "new_snapshot"]
    assert results[1].source_id == results[0].source_id
    assert results[3].source_id == results[2].source_id
    assert results[3].snapshot_id != results[2].snapshot_id


def test_it_makes_every_passage_searchable_by_bm25_at_commit():
    results = ingest_documents([_doc(i) for i in range(4)], batch_size=3)

    passages = Passage.objects.filter(source_id__in=[r.source_id for r in results])
    assert passages.filter(kind="chunk").exists() and passages.filter(kind="section").exists()
    indexed = SparseDocument.objects.filter(passage__in=passages)
    assert indexed.count() == passages.count() == sum(r.passages for r in results)
    assert not passages.filter(kind="chunk", embedding__isnull=True).exists()


def test_it_folds_the_new_bm25_postings_into_packed_blocks_once_at_the_end(monkeypatch):
    from ledger.models import SparseTerm
    from ledger.services import ingest, sparse_index
    from ledger.services.sparse_index import PACK_MIN, bm25_scores, bm25_sql
    from research.pipeline.retrieve.sparse import BM25Params

    folds = []
    real = sparse_index.pack_sparse_index

    def counted():
        folds.append(real())
        return folds[-1]

    monkeypatch.setattr(ingest, "pack_sparse_index", counted)
    docs = [
        _doc(i, body=f"{ABSTRACTS[i % 4][1]} Cohort {i} was followed for {i + 2} years.")
        for i in range(PACK_MIN + 4)
    ]

    ingest_documents(docs, batch_size=8)

    assert len(folds) == 1 and folds[0].terms > 0  # five batches, one fold
    cohort = SparseTerm.objects.get(kind="chunk", term="cohort")
    assert cohort.df == len(docs) and cohort.pending == 0 and cohort.packed_through > 0
    ids, scores = bm25_scores("chunk", ["cohort", "vitamin", "fractur"])
    with connection.cursor() as cursor:
        cursor.execute(
            bm25_sql(BM25Params()),
            {"kind": "chunk", "terms": ["cohort", "vitamin", "fractur"], "k": 1000},
        )
        expected = {pid: score for pid, _, score in cursor.fetchall()}
    assert dict(zip(ids.tolist(), scores.tolist(), strict=True)) == pytest.approx(expected)


def test_it_keeps_the_batches_written_and_raises_when_the_encoder_fails():
    embedder = _Recorder(fail_on=2)

    with pytest.raises(RuntimeError, match="encoder crashed"):
        ingest_documents([_doc(0), _doc(1)], batch_size=1, embedder=embedder)

    stored = set(Passage.objects.values_list("source__canonical_id", flat=True))
    assert stored == {"corpus:pipeline:0"}  # batch 1 committed, nothing of batch 2


def test_it_estimates_the_time_left_from_the_rate_so_far():
    assert remaining_seconds(0, 100, 5.0) is None
    assert remaining_seconds(25, 100, 10.0) == pytest.approx(30.0)
    assert remaining_seconds(10, 0, 3.0) is None
    assert [format_duration(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 05 s", "1 h 02 min"]


def test_it_prints_progress_with_the_time_left_on_import(tmp_path):
    folder = tmp_path / "tiny-beir"
    folder.mkdir()
    lines = [
        json.dumps({"_id": str(i), "title": t, "text": x}) for i, (t, x) in enumerate(ABSTRACTS)
    ]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    err = StringIO()

    call_command("import_corpus", str(folder), "--batch-size", "2", stdout=StringIO(), stderr=err)

    first, last = err.getvalue().strip().splitlines()
    assert first.strip().startswith("2/4 documents processed in") and "left" in first
    assert "docs/s" in first
    assert last.strip().startswith("4/4 documents processed") and "left" not in last


def test_it_shows_the_time_left_on_the_upload_page(client, author):
    from ledger.services.uploads import do_ingest_uploads, do_queue_uploads
    from tests.ledger.test_uploads import _file

    library = Library.objects.create(name="u")
    files = [_file(f"n{i}.md", f"# Note {i}\n\n{ABSTRACTS[i][1]}\n".encode()) for i in range(2)]
    batch = do_queue_uploads(library, author, files)
    first = Upload.objects.filter(batch=batch).order_by("pk")[0]
    Upload.objects.filter(pk=first.pk).update(status="added")  # one done, one still queued
    client.force_login(author)

    page = client.get(f"/library/uploads/{batch}/").content.decode()

    assert "1 of 2 files processed" in " ".join(page.split())
    assert "left</span>" in page
    do_ingest_uploads(batch)
    assert "left</span>" not in client.get(f"/library/uploads/{batch}/").content.decode()


def test_an_identity_another_ingest_stored_meanwhile_is_taken_not_inserted_twice(monkeypatch):
    """Two uploads of the same new file overlapping (a user's upload beside a benchmark's
    ingest of the same library) crashed one of them with an IntegrityError on
    Source.canonical_id: each looked the identity up, found nothing, and both inserted it.
    The write holds the identity and looks again: the later one finds it stored."""
    from ledger.models import Source
    from ledger.services import ingest

    library = Library.objects.create(name="Race")
    doc = DocumentInput(raw=b"# Guide\n\nShared code saves money.\n", filename="guide.md")
    classify = ingest._classify

    def classify_then_lose_the_race(prepared):
        fresh = classify(prepared)  # this ingest found nothing stored: the file is new
        monkeypatch.setattr(ingest, "_classify", classify)
        [other] = ingest_documents([doc], library)  # another ingest stores it first
        assert other.status == "added"
        return fresh

    monkeypatch.setattr(ingest, "_classify", classify_then_lose_the_race)
    [result] = ingest_documents([doc], library)

    assert result.status == "unchanged"
    assert Source.objects.filter(canonical_id=result.canonical_id).count() == 1
    assert Passage.objects.filter(snapshot__source__canonical_id=result.canonical_id).count() > 0
    assert result.snapshot_id is not None
