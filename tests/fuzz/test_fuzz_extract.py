"""Extraction of hostile bytes: an Extracted record or an ExtractionError, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from research.pipeline.extract import _CONTROL, Extracted, ExtractionError, extract
from tests.pipeline.minipdf import make_pdf

CHARSETS = st.sampled_from(
    ["utf-8", "latin-1", "undefined", "utf-7", "base64", "rot13", "idna", "x-nope", "utf-16", ""]
) | st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.:", max_size=20)
KINDS = st.sampled_from(["a.txt", "a.md", "a.rst", "a.html", "a.pdf", ""])


def _check(result: Extracted) -> None:
    assert not _CONTROL.search(result.text), "control characters reached the text"
    for block in result.blocks:
        assert 0 <= block.start < block.end <= len(result.text)
        piece = result.text[block.start : block.end]
        assert piece == piece.strip()
    assert result.title != "None"


def _extract(data: bytes, filename: str = "", content_type: str = "") -> None:
    try:
        result = extract(data, filename=filename, content_type=content_type)
    except ExtractionError as exc:
        assert exc.reason and str(exc)
    else:
        _check(result)


@given(data=st.binary(max_size=2000), charset=CHARSETS, filename=KINDS)
def test_it_extracts_or_refuses_any_bytes_with_any_declared_charset(data, charset, filename):
    _extract(data, filename=filename, content_type=f"text/plain; charset={charset}")


@given(body=st.text(max_size=500), charset=CHARSETS)
def test_it_extracts_or_refuses_hostile_html(body, charset):
    html = f'<html><head><meta charset="{charset}"><title>{body[:40]}</title></head>'
    html += f"<body><article><p>{body}</p><p>Readable words follow here.</p></article></body>"
    _extract(html.encode("utf-8", "surrogatepass"), filename="page.html")


@given(text=st.text(max_size=800))
def test_it_extracts_or_refuses_any_markdown(text):
    _extract(text.encode("utf-8", "surrogatepass"), filename="notes.md")


# reStructuredText's own markup, so that examples reach sections, roles and directives.
RST_PIECES = st.sampled_from(
    ["Title\n=====\n", "PEP: 1\nTitle: T\n\n", ".. note::\n\n   x\n", ".. c:function:: f\n",
     ":c:func:`f <g>` ", "``x``", "* item\n", "::\n\n    code\n", "\n\n", "`a`_", "|s|",
     ".. include:: /etc/passwd\n", ".. raw:: html\n\n   <b>x</b>\n", "+--+\n|a |\n+--+\n"]
)  # fmt: skip


@given(pieces=st.lists(st.one_of(RST_PIECES, st.text(max_size=30)), max_size=12))
def test_it_extracts_or_refuses_any_restructuredtext(pieces):
    _extract("".join(pieces).encode("utf-8", "surrogatepass"), filename="notes.rst")


@given(
    lines=st.lists(st.text(alphabet=st.characters(max_codepoint=255), max_size=40), max_size=4),
    title=st.text(alphabet=st.characters(max_codepoint=255), max_size=30),
)
def test_it_extracts_or_refuses_pdfs(lines, title):
    _extract(make_pdf([lines or ["x"]], title=title))


@pytest.mark.parametrize(
    ("data", "content_type", "filename"),
    [
        (b"hello world text", "text/plain; charset=undefined", ""),
        (
            b'<html><head><meta charset="undefined"></head><body><p>Words here now.</p></body>',
            "",
            "a.html",
        ),
    ],
)
def test_it_turns_a_bogus_declared_charset_into_an_extraction_error(data, content_type, filename):
    with pytest.raises(ExtractionError) as refused:
        extract(data, content_type=content_type, filename=filename)
    assert refused.value.reason == "encoding"


def test_it_never_titles_a_pdf_none_from_a_dangling_reference():
    pdf = make_pdf([["Dose one lowered risk."]], title="x")
    dangling = pdf.replace(b"<< /Title (x) >>", b"<< /Title 99 0 R >>")
    assert extract(dangling).title == ""


def test_it_drops_control_characters_from_html_text():
    html = "<html><body><article><p>Vitamin\x01 D\x1b lowered\x85 falls in trials.</p>"
    html += "<p>Second paragraph with words.</p></article></body></html>"
    text = extract(html.encode(), filename="a.html").text
    assert "Vitamin D lowered falls" in text and not _CONTROL.search(text)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "markdown",
    [
        "# " + "#" * 40_000 + "x",
        "# a " + " #" * 20_000,
        "[" * 40_000 + " words",
        "[x](" * 10_000 + " words",
        "[a" * 20_000 + "](" + "b" * 20_000,
    ],
)
def test_it_parses_markdown_in_linear_time(markdown):
    """Each took 4-8 s at 40 KB with the old regexes; 30 s is far above a linear parser."""
    _extract((markdown + "\n\nSome words here.").encode(), filename="a.md")
