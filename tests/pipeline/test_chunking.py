from __future__ import annotations

from research.pipeline.chunking import ChunkConfig, chunk_document
from research.pipeline.extract import Block, corpus_document, extract
from tests.pipeline.minipdf import make_pdf


def _sentence(i: int) -> str:
    return f"Sentence number {i} reports that the treatment changed outcome {i} in the cohort."


def _long_doc(n: int = 40):
    return corpus_document("A long abstract.", " ".join(_sentence(i) for i in range(n)))


def test_it_gives_every_passage_exact_offsets_into_the_text():
    doc = _long_doc()

    drafts = chunk_document(doc.text, doc.blocks, ChunkConfig(max_chars=400))

    assert drafts
    for draft in drafts:
        piece = doc.text[draft.start : draft.end]
        assert piece == piece.strip() and piece
        for start, end in draft.sentences:
            assert draft.start <= start < end <= draft.end


def test_it_bounds_chunk_size_and_overlaps_by_one_sentence():
    doc = _long_doc()

    drafts = chunk_document(doc.text, doc.blocks, ChunkConfig(max_chars=400, overlap_sentences=1))
    chunks = [d for d in drafts if d.kind == "chunk"]

    assert len(chunks) > 5
    assert all(d.end - d.start <= 400 for d in chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.sentences[0] == before.sentences[-1]
    covered = {span for d in chunks for span in d.sentences}
    section = next(d for d in drafts if d.kind == "section")
    assert covered == set(section.sentences)


def test_it_makes_one_section_and_few_chunks_for_a_short_abstract():
    doc = corpus_document(
        "Coffee and sleep.", "Caffeine reduced sleep. The effect was dose dependent."
    )

    drafts = chunk_document(doc.text, doc.blocks)

    assert [d.kind for d in drafts] == ["section", "chunk"]
    section, chunk = drafts
    assert (section.start, section.end) == (0, len(doc.text))
    assert (
        doc.text[chunk.start : chunk.end]
        == "Caffeine reduced sleep. The effect was dose dependent."
    )
    assert chunk.parent == 0


def test_it_follows_headings_into_section_paths():
    markdown = (
        "# Report\n\nOpening words of the report.\n\n## Methods\n\nWe measured things.\n\n"
        "### Sampling\n\nWe sampled widely.\n\n## Results\n\nThings changed.\n"
    )
    doc = extract(markdown.encode(), filename="r.md")

    drafts = chunk_document(doc.text, doc.blocks)
    paths = {doc.text[d.start : d.end]: d.section_path for d in drafts if d.kind == "chunk"}

    assert paths == {
        "Opening words of the report.": "Report",
        "We measured things.": "Report > Methods",
        "We sampled widely.": "Report > Methods > Sampling",
        "Things changed.": "Report > Results",
    }
    sections = [d for d in drafts if d.kind == "section"]
    assert doc.text[sections[1].start : sections[1].end] == "Methods\n\nWe measured things."


def test_it_keeps_a_table_with_its_caption():
    text = "Intro sentence here.\n\nTable 2: Doses\n\nArm | Dose\nA | 10 mg\nB | 20 mg"
    blocks = [
        Block("paragraph", 0, 20),
        Block("caption", 22, 36),
        Block("table", 38, len(text)),
    ]

    drafts = chunk_document(text, blocks, ChunkConfig(max_chars=60))
    chunks = [text[d.start : d.end] for d in drafts if d.kind == "chunk"]

    holding = [c for c in chunks if "Table 2: Doses" in c]
    assert holding and "Arm | Dose" in holding[0]


def test_it_records_the_pdf_page_of_each_passage():
    pdf = make_pdf(
        [["First page sentence one.", "First page sentence two."], ["Second page text."]]
    )
    doc = extract(pdf, filename="p.pdf")

    drafts = chunk_document(doc.text, doc.blocks, ChunkConfig(max_chars=50))
    pages = {doc.text[d.start : d.end]: d.page for d in drafts if d.kind == "chunk"}

    assert pages["Second page text."] == 2
    assert any(page == 1 for page in pages.values())


def test_it_is_deterministic():
    doc = _long_doc(25)

    assert chunk_document(doc.text, doc.blocks) == chunk_document(doc.text, doc.blocks)
