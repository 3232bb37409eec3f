from __future__ import annotations

import pytest

from research.pipeline.extract import ExtractionError, corpus_document, extract
from tests.pipeline.minipdf import make_pdf

ARTICLE = """<!doctype html><html><head>
<title>Trial finds drug lowers pressure | Daily Planet</title>
<meta name="author" content="Jane Roe"><meta property="og:site_name" content="Daily Planet">
<meta property="article:published_time" content="2023-04-05"></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/world">World news</a></li>
<li><a href="/sport">Sport section</a></li></ul></nav>
<div class="advert" id="ad-top">BUY CHEAP WATCHES NOW AT WATCHMART</div>
<article><h1>Trial finds drug lowers pressure</h1>
<p>A randomized trial of 400 adults found that the new drug lowered systolic blood pressure by
eleven points over twelve weeks compared with placebo, the investigators reported.</p>
<h2>Side effects</h2>
<p>Dizziness was reported by nine percent of participants taking the drug and by four percent
of those taking placebo, a difference the authors called modest.</p>
<ul><li>Headache in three percent of patients</li><li>Nausea in two percent of patients</li></ul>
<table><caption>Table 1: Outcomes at twelve weeks</caption><tr><th>Arm</th><th>Change</th></tr>
<tr><td>Drug</td><td>-11</td></tr><tr><td>Placebo</td><td>-2</td></tr></table>
<p>The trial was funded by the manufacturer, which had no role in the analysis of the data.</p>
</article>
<aside class="sidebar"><h3>Most read</h3><p>Celebrity chef opens restaurant</p></aside>
<footer><p>Copyright 2024 Daily Planet Media. All rights reserved.</p>
<a href="/privacy">Privacy policy</a></footer></body></html>"""


def test_it_keeps_only_the_main_text_of_an_html_page():
    result = extract(ARTICLE.encode(), filename="trial.html")

    assert "lowered systolic blood pressure" in result.text
    assert "Dizziness was reported" in result.text
    assert "Headache in three percent" in result.text
    for boilerplate in ("World news", "WATCHMART", "All rights reserved", "Privacy policy"):
        assert boilerplate not in result.text
    assert result.extractor == "trafilatura" and result.extractor_version


def test_it_records_html_structure_and_metadata():
    result = extract(ARTICLE.encode(), content_type="text/html; charset=utf-8")

    headings = [result.text[b.start : b.end] for b in result.blocks if b.kind == "heading"]
    assert "Side effects" in headings
    kinds = {b.kind for b in result.blocks}
    assert {"paragraph", "list_item", "table", "caption"} <= kinds
    caption = next(b for b in result.blocks if b.kind == "caption")
    assert "Outcomes at twelve weeks" in result.text[caption.start : caption.end]
    assert result.metadata["author"] == "Jane Roe"
    assert result.metadata["sitename"] == "Daily Planet"
    assert result.title.startswith("Trial finds drug lowers pressure")


def test_it_extracts_pdf_text_with_page_numbers():
    pdf = make_pdf(
        [["Methods were standard.", "We enrolled 120 patients."], ["Mortality fell by a third."]],
        title="A trial",
    )

    result = extract(pdf, filename="paper.pdf")

    assert result.extractor == "pypdf" and result.title == "A trial"
    assert [page.page for page in result.pages] == [1, 2]
    second = result.pages[1]
    assert result.text[second.start : second.end] == "Mortality fell by a third."
    first = result.pages[0]
    assert "We enrolled 120 patients." in result.text[first.start : first.end]
    assert result.metadata["page_count"] == 2


def test_it_keeps_markdown_headings_lists_and_tables():
    markdown = (
        "# Guide\n\nIntro paragraph with **bold** text and a [link](https://x.test).\n\n"
        "## Install\n\n- step one\n- step two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )

    result = extract(markdown.encode(), filename="guide.md")

    assert "Intro paragraph with bold text and a link." in result.text
    assert "https://x.test" not in result.text
    headings = [
        (result.text[b.start : b.end], b.level) for b in result.blocks if b.kind == "heading"
    ]
    assert headings == [("Guide", 1), ("Install", 2)]
    items = [result.text[b.start : b.end] for b in result.blocks if b.kind == "list_item"]
    assert items == ["step one", "step two"]  # the bullet is markup, not the item's words
    table = next(b for b in result.blocks if b.kind == "table")
    assert result.text[table.start : table.end] == "a | b\n1 | 2"


def test_it_leaves_markdown_s_front_matter_raw_html_and_code_marks_out():
    """Real policy pages (Jekyll Markdown with inline HTML) put their front matter, footnote
    tags and HTML lists into mined claims: "--- layout: page title: …", "…Government.<sup
    id="fnr3"><a href="#fn3">3</a></sup>", "Or</li> <li>The CIO believes …"."""
    markdown = (
        "---\nlayout: page\ntitle: Exceptions\n---\n\n# Exceptions\n\n"
        'Code is shared.<sup id="fnr3"><a href="#fn3">3</a></sup> It saves money.\n\n'
        "<ol>\n<li>Sharing is restricted by law;</li>\n<li>The CIO exempts it.</li>\n</ol>\n\n"
        "Use `PYTHON_GIL=0` to keep it off.\n\n```sh\nmake run\n```\n"
    )

    result = extract(markdown.encode(), filename="exceptions.md")

    blocks = [(b.kind, result.text[b.start : b.end]) for b in result.blocks]
    assert blocks == [
        ("heading", "Exceptions"),
        ("paragraph", "Code is shared.3 It saves money."),
        ("list_item", "Sharing is restricted by law;"),
        ("list_item", "The CIO exempts it."),
        ("paragraph", "Use PYTHON_GIL=0 to keep it off."),
        ("code", "make run"),
    ]
    assert "layout" not in result.text and "<" not in result.text
    assert result.title == "Exceptions"


@pytest.mark.parametrize(
    ("front", "title"),
    [
        ("title: CFPB Source Code Policy", "CFPB Source Code Policy"),
        ('title: "Play 13: Default to open"', "Play 13: Default to open"),
        ("title: 'It''s open'", "It's open"),
        ('title: "Say \\"open\\""', 'Say "open"'),
        ("title: Open source # the site's name", "Open source"),
        ("title: >\n  Folded, not read", "Introduction"),  # a block scalar: the heading
        ("permalink: /policy/", "Introduction"),  # no title: the first heading
        ("  title: nested", "Introduction"),  # not a top-level key
    ],
)
def test_a_markdown_title_is_its_front_matter_s_title_before_its_first_heading(front, title):
    """Site pages name themselves in their front matter and open on a section heading: a
    library of policy pages was titled "Introduction", "Purpose", "Checklist" and ""."""
    markdown = f"---\nlayout: page\n{front}\n---\n\n## Introduction\n\nCode is shared.\n"

    result = extract(markdown.encode(), filename="policy.md")

    assert result.title == title
    assert result.text == "Introduction\n\nCode is shared."  # the front matter is not text


def test_an_html_line_break_in_markdown_separates_words():
    """A policy memo's heading "M-16-21<br/>MEMORANDUM FOR …" was read "M-16-21MEMORANDUM"."""
    result = extract(b"## M-16-21<br/>MEMORANDUM FOR AGENCIES\n\nA<BR>B c.\n", filename="m.md")

    assert result.title == "M-16-21 MEMORANDUM FOR AGENCIES"
    assert "M-16-21\nMEMORANDUM" in result.text and "A\nB c." in result.text


def test_a_markdown_file_opening_with_a_rule_keeps_its_text():
    result = extract(b"---\n\nA rule, then text.\n\n---\n\nMore text.\n", filename="r.md")

    assert "A rule, then text." in result.text and "More text." in result.text


@pytest.mark.parametrize(
    ("data", "filename", "reason", "words"),
    [
        (b"", "empty.txt", "empty", "empty"),
        (b"  \n\t\n", "blank.md", "empty", "empty"),
        (bytes(range(256)) * 8, "blob.txt", "binary", "binary"),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00\x10" * 300,
            "pic.html",
            "binary",
            "binary",
        ),
        (
            "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e na\u00efve r\u00e9sum\u00e9".encode("cp1252"),
            "notes.txt",
            "encoding",
            "UTF-8",
        ),
        (b"<html><body><div><<<>>></div", "broken.html", "malformed_html", "malformed"),
        (b"%PDF-1.4\n1 0 obj <<>> trailer garbage", "bad.pdf", "pdf", "PDF"),
    ],
)
def test_it_refuses_bad_files_with_a_clear_reason(data, filename, reason, words):
    with pytest.raises(ExtractionError) as caught:
        extract(data, filename=filename)

    assert caught.value.reason == reason
    assert words in str(caught.value)


def test_it_names_the_likely_encoding_of_undeclared_non_utf8_text():
    data = (
        "Der Stra\u00dfenverkehr w\u00e4chst \u00fcberall in gro\u00dfen St\u00e4dten. " * 5
    ).encode("latin-1")

    with pytest.raises(ExtractionError) as caught:
        extract(data, filename="de.txt")

    assert "not valid UTF-8" in str(caught.value)
    assert "looks like" in str(caught.value)


def test_it_decodes_text_whose_encoding_is_declared():
    data = "Caf\u00e9 au lait is served hot.".encode("latin-1")

    assert (
        extract(data, content_type="text/plain; charset=latin-1").text
        == "Caf\u00e9 au lait is served hot."
    )
    assert extract(b"\xef\xbb\xbfHello there world.").text == "Hello there world."
    assert extract("Grüße aus Köln.".encode("utf-16")).text == "Grüße aus Köln."


def test_it_decodes_html_by_its_meta_charset():
    html = (
        '<html><head><meta charset="windows-1252"></head><body><article><p>'
        + "Les r\u00e9sultats montrent une baisse nette de la mortalit\u00e9 chez les patients. "
        * 3
        + "</p></article></body></html>"
    )

    result = extract(html.encode("cp1252"), filename="fr.html")

    assert "mortalit\u00e9" in result.text


def test_it_builds_corpus_documents_as_title_blank_line_body():
    result = corpus_document(" A title. ", "Body sentence one. Body sentence two. ")

    assert result.text == "A title.\n\nBody sentence one. Body sentence two."
    assert [b.kind for b in result.blocks] == ["title", "paragraph"]


RST = """\
Free threading
==============

.. contents::

Overview
--------

Set :envvar:`PYTHON_GIL` to ``0``; see :c:func:`the slot <Py_mod_gil>` and
:func:`~threading.Thread`.

* one item
* two items

.. versionadded:: 3.13
   Directive text Sphinx would show.

::

    make run

.. include:: /etc/passwd
"""


def test_it_reads_restructuredtext_with_docutils():
    """The CPython documents of the technical question: section underlines ("Thread State
    and GIL APIs ====="), Sphinx roles (":envvar:`PYTHON_GIL`") and bullets reached mined
    claims when a .rst file was read as plain text."""
    result = extract(RST.encode(), filename="howto.rst")

    blocks = [(b.kind, result.text[b.start : b.end]) for b in result.blocks]
    assert blocks == [
        ("heading", "Free threading"),
        ("heading", "Overview"),
        ("paragraph", "Set PYTHON_GIL to 0; see the slot and\nThread."),
        ("list_item", "one item"),
        ("list_item", "two items"),
        ("code", "make run"),
    ]
    assert result.title == "Free threading" and result.extractor == "docutils"
    assert "passwd" not in result.text and "root:" not in result.text  # no file is read


def test_a_pep_s_header_is_its_metadata_and_title():
    pep = (
        "PEP: 9999\nTitle: An Example Proposal\nAuthor: Ada Person <ada@example.org>\n"
        "Status: Draft\n\n"
        "Abstract\n========\n\nThis PEP proposes an example.\n"
    )

    result = extract(pep.encode(), filename="pep-9999.rst")

    assert result.title == "An Example Proposal"
    blocks = [(b.kind, result.text[b.start : b.end]) for b in result.blocks]
    assert blocks == [("heading", "Abstract"), ("paragraph", "This PEP proposes an example.")]
