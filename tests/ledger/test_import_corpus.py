from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from ledger.models import Library, Passage, Snapshot, Source

pytestmark = pytest.mark.django_db

DOCS = [
    {
        "_id": "11",
        "title": "Vitamin D and bone density.",
        "text": "Vitamin D supplementation increased bone density in older adults. "
        "The effect was largest in women. No effect was seen in men (p = 0.4).",
        "metadata": {},
    },
    {
        "_id": "12",
        "title": "Coffee and sleep.",
        "text": "Caffeine taken six hours before bed reduced total sleep time by 41 minutes.",
        "metadata": {},
    },
]


def _write_beir(folder, docs):
    folder.mkdir()
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps(doc) + "\n" for doc in docs), encoding="utf-8")
    return path


def _scifact_line(doc):
    sentences = [s + "." for s in doc["text"].rstrip(".").split(". ")]
    return {
        "doc_id": int(doc["_id"]),
        "title": doc["title"],
        "abstract": sentences,
        "structured": False,
    }


def _run(path, *args):
    out = StringIO()
    call_command("import_corpus", str(path), *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_imports_a_beir_corpus_with_exact_passage_offsets(tmp_path):
    path = _write_beir(tmp_path / "tiny-beir", DOCS)

    output = _run(path)

    assert "added: 2" in output
    library = Library.objects.get(name="tiny")
    source = Source.objects.get(canonical_id="corpus:tiny:11")
    assert list(source.libraries.all()) == [library]
    assert source.metadata == {"corpus": "tiny", "doc_id": "11"}
    snapshot = source.snapshots.get()
    assert snapshot.text == str(DOCS[0]["title"]) + "\n\n" + str(DOCS[0]["text"])
    passages = list(Passage.objects.filter(source__libraries=library))
    assert {p.kind for p in passages} == {"section", "chunk"}
    for passage in passages:
        assert passage.text == passage.snapshot.text[passage.start : passage.end]
        for start, end in passage.sentences:
            assert passage.start <= start < end <= passage.end
    chunks = [p for p in passages if p.kind == "chunk"]
    assert all(p.embedding is not None and len(p.embedding) == 384 for p in chunks)
    assert all(p.parent is not None and p.parent.kind == "section" for p in chunks)
    assert all(p.embedding_model for p in chunks)


def test_it_adds_nothing_on_a_second_run_and_says_so(tmp_path):
    path = _write_beir(tmp_path / "tiny-beir", DOCS)
    _run(path)
    counts = (Source.objects.count(), Snapshot.objects.count(), Passage.objects.count())

    output = _run(path)

    assert (Source.objects.count(), Snapshot.objects.count(), Passage.objects.count()) == counts
    assert "unchanged: 2" in output
    assert "nothing new" in output


def test_it_maps_scifact_format_to_the_same_sources_as_beir(tmp_path):
    _run(_write_beir(tmp_path / "tiny-beir", DOCS))
    folder = tmp_path / "tiny"
    folder.mkdir()
    scifact = folder / "corpus.jsonl"
    scifact.write_text("".join(json.dumps(_scifact_line(d)) + "\n" for d in DOCS))

    output = _run(scifact)

    assert "unchanged: 2" in output
    assert Source.objects.count() == 2 and Snapshot.objects.count() == 2


def test_it_makes_a_new_snapshot_of_the_same_source_when_content_changes(tmp_path):
    _run(_write_beir(tmp_path / "tiny-beir", DOCS))
    erratum = str(DOCS[0]["text"]) + " A later erratum corrected the dose."
    edited = [dict(DOCS[0], text=erratum), DOCS[1]]

    output = _run(_write_beir(tmp_path / "copy-beir", edited), "--corpus-name", "tiny")

    assert "new_snapshot: 1" in output and "unchanged: 1" in output
    source = Source.objects.get(canonical_id="corpus:tiny:11")
    assert source.snapshots.count() == 2


def test_it_imports_a_folder_of_files_reporting_bad_ones(tmp_path):
    folder = tmp_path / "reports"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Findings\n\nThe pilot cut waiting times by a fifth.\n")
    (folder / "sub" / "b.html").write_text(
        "<html><body><article><p>The council approved the budget after a long debate "
        "about transport spending and fares.</p></article></body></html>"
    )
    (folder / "pep.rst").write_text(
        "PEP: 9999\nTitle: A proposal in reStructuredText\n\nAbstract\n========\n\n"
        "The proposal removes the lock from the interpreter's hot path.\n"
    )
    (folder / "empty.txt").write_bytes(b"")
    (folder / "ignored.bin").write_bytes(b"\x00\x01")

    output = _run(folder)
    again = _run(folder)

    assert "added: 3" in output and "failed: 1" in output
    assert "failed: empty.txt: the file is empty" in output
    assert {s.metadata["path"] for s in Library.objects.get(name="reports").sources.all()} == {
        "a.md",
        "pep.rst",
        "sub/b.html",
    }
    assert "unchanged: 3" in again and "nothing new" in again


def test_it_skips_bad_lines_with_their_numbers_and_imports_the_rest(tmp_path):
    folder = tmp_path / "mixed-beir"
    folder.mkdir()
    lines = [
        json.dumps(DOCS[0]),
        '{"_id": "13", "title": "Broken',  # truncated JSON
        json.dumps({"doc_id": 5, "abstract": ["A SciFact record."]}),  # another format
        json.dumps({"_id": "14", "text": ["not", "a", "string"]}),
        json.dumps(["a", "list"]),
        json.dumps({"_id": None, "text": "no id"}),
        "",
        json.dumps(DOCS[1]),
    ]
    path = folder / "corpus.jsonl"
    path.write_bytes("\n".join(lines).encode() + b"\n\xff\xfe not utf-8\n")

    output = _run(path)

    assert "added: 2" in output and "bad_lines: 6" in output
    for number in (2, 3, 4, 5, 6, 9):
        assert f"skipped line {number}:" in output, output
    assert "line 3: a scifact record in a beir corpus" in output
    assert set(Source.objects.values_list("canonical_id", flat=True)) == {
        "corpus:mixed:11",
        "corpus:mixed:12",
    }


def test_it_reads_every_malformed_line_as_a_corpus_error():
    import tempfile
    from pathlib import Path

    from ledger.services.corpus import CorpusError, read_corpus

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.jsonl"
        for bad in ('{"_id": "1", "text": 3}', '{"_id": "1", "text": "x", "metadata": 7}'):
            path.write_text(json.dumps(DOCS[0]) + "\n" + bad + "\n")
            with pytest.raises(CorpusError, match="line 2"):
                list(read_corpus(path, "x"))


def test_it_types_sources_by_the_corpus_format_never_by_its_name(tmp_path):
    from ledger.services.corpus import read_corpus

    beir = _write_beir(tmp_path / "papers-beir", DOCS)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps(_scifact_line(d)) + "\n" for d in DOCS))

    assert {d.source_type for d in read_corpus(beir, "papers")} == {"other"}
    assert {d.source_type for d in read_corpus(folder / "corpus.jsonl", "notes")} == {"paper"}
    assert {d.source_type for d in read_corpus(beir, "papers", "paper")} == {"paper"}


def test_it_imports_into_a_public_library_or_one_private_to_an_owner(tmp_path, author):
    public = _run(_write_beir(tmp_path / "open-beir", DOCS))
    assert "(public: every signed-in user reads it)" in public
    assert Library.objects.get(name="open").public
    private = _run(_write_beir(tmp_path / "mine-beir", DOCS), "--owner", "author")
    assert "(private to author)" in private
    library = Library.objects.get(name="mine")
    assert library.owner == author and not library.public
