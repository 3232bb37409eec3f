"""Parsing hostile reports: a consistent ParsedReport or a ReportParseError, nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from research.pipeline.audit import (
    FINDING_KINDS,
    ParsedReport,
    ReportParseError,
    parse_report,
)

FORMATS = st.sampled_from(["auto", "auto", "markdown", "html", "text", "json"])

# The pieces reports cite with, so that examples reach markers, links and reference lists.
PIECES = st.sampled_from(
    ["[1]", "[2]", "[7]", "[1, 3]", "[1-3]", "[1][2]", "[^1]", "[^x]: note",
     "[^1]: Smith. doi:10.1000/xyz", "[1]: https://a.example.org",
     "[1] Title: https://a.example.org/p", "1. Title - https://b.example.org",
     "- [2] [T](https://c.example.org)", "[T](https://d.example.org)",
     "([T](https://e.example.org))", "[T](https://unclosed.example.org",
     "(https://f.example.org/x_(y))", "https://", "https://nodot", "doi:10.1234/abc.",
     "arXiv:2101.00001v2", "arxiv.org/abs/hep-th/9901001", "【1†source】", "<sup>1</sup>",
     "<sup>[2]</sup>", "²", "rose.1 ", "[smith2020:12]", "[Source 3, p. 12]", "[smith2020]",
     "![img](x.png)", "<a href=\"#r1\">1</a>", "<a href=\"https://g.example.org\">g</a>",
     "\n## References\n", "\n### Sources\n", "\nSources:\n", "\nWorks cited\n", "\n\n", "\n",
     "# ", "> ", "- ", "1. ", "**", "*", "_", "`", "\\[", "(", ")", "[", "]", "<", ">", " ", ". ",
     "Wind grew. ", "Solar fell", "<p>", "</p>", "<ol><li>", "</li></ol>", "<h2>References</h2>",
     "{", "}", "|", "\t"]
)  # fmt: skip


def _check(report: ParsedReport) -> None:
    assert report.format in ("markdown", "html", "text", "json")
    for number, sentence in enumerate(report.sentences):
        assert sentence.index == number
        assert 0 <= sentence.block < len(report.blocks)
        block = report.blocks[sentence.block]
        assert number in block.sentences
        assert sentence.raw in block.text
        assert sentence.text and sentence.text == " ".join(sentence.text.split())
        assert set(sentence.unresolved) <= set(sentence.markers)
        assert len(set(sentence.citations)) == len(sentence.citations)
    for number, block in enumerate(report.blocks):
        assert block.kind in ("heading", "paragraph", "list-item", "quote")
        assert all(report.sentences[i].block == number for i in block.sentences)
        assert not (block.kind == "heading" and block.sentences)
    for finding in report.findings:
        assert finding.kind in FINDING_KINDS and finding.detail
        assert finding.sentence is None or 0 <= finding.sentence < len(report.sentences)
    for citation in (*report.references, *(c for s in report.sentences for c in s.citations)):
        assert citation.url == "" or citation.url.startswith(("http://", "https://"))
    assert ParsedReport.from_json(json.loads(json.dumps(report.to_json()))) == report


def _parse(data: str | bytes, format: str = "auto", filename: str = "") -> None:
    try:
        report = parse_report(data, format=format, filename=filename)
    except ReportParseError as exc:
        assert str(exc)
    else:
        _check(report)


@given(data=st.binary(max_size=2000), format=FORMATS)
def test_it_parses_or_refuses_any_bytes(data, format):
    _parse(data, format)


@given(text=st.text(max_size=1000), format=FORMATS)
def test_it_parses_or_refuses_any_text(text, format):
    _parse(text, format)


@given(pieces=st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=40), format=FORMATS)
def test_it_parses_reports_built_from_citation_pieces(pieces, format):
    _parse("".join(pieces), format)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30) | PIECES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
CITATIONS = st.lists(
    st.one_of(
        PIECES,
        st.text(max_size=30),
        st.fixed_dictionaries({"url": st.one_of(PIECES, JSON_VALUES), "title": JSON_VALUES}),
        JSON_VALUES,
    ),
    max_size=6,
)


@given(
    text=st.one_of(st.lists(PIECES, max_size=30).map("".join), JSON_VALUES),
    citations=st.one_of(CITATIONS, JSON_VALUES),
    results=st.one_of(st.none(), CITATIONS),
    shape=st.sampled_from(["text", "choices", "other"]),
)
def test_it_parses_or_refuses_json_ish_objects(text, citations, results, shape):
    if shape == "text":
        data = {"text": text, "citations": citations}
    elif shape == "choices":
        data = {"choices": [{"message": {"content": text}}], "citations": citations}
    else:
        data = {"answer": text, "sources": citations}
    if results is not None:
        data["search_results"] = results
    _parse(json.dumps(data), "auto", "answer.json")


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "[" * 50_000,
        "[" * 25_000 + "]" * 25_000,
        "(" * 50_000,
        "[x](" * 12_000,
        "[a" * 20_000 + "](" + "b" * 20_000,
        "[^" * 25_000,
        "[1, " * 12_000,
        "https://" * 6_000,
        "https://a.org/" + "(" * 20_000,
        "<" * 50_000,
        "<a href=" * 6_000,
        "doi:10.1234/" * 4_000,
        "a." * 25_000,
        "a.1 " * 12_000,
        "\u00b2" * 50_000,
        "\u3010" * 50_000,
        " " * 50_000 + "x",
        "*" * 50_000,
        "_" * 50_000,
        "\\" * 50_000,
        "Sources:\n" + "[1] " * 12_000,
        "## References\n" + "- x\n" * 10_000,
        "[1]: " * 10_000,
        "#" * 50_000,
        "> " * 25_000 + "x",
        "- " * 25_000 + "x",
        "<div>" * 10_000 + "x",
        "<b>" * 10_000 + "x",
        '{"text": "' + "[1]" * 12_000 + '", "citations": []}',
        "[" * 10_000 + "x" + "]" * 10_000 + "(" * 10_000 + "y" + ")" * 10_000,
    ],
)
def test_it_parses_pathological_reports_in_linear_time(text):
    """50 KB of one bracket, tag or marker piece; 30 s is far above a linear parser."""
    _parse(text if text.startswith("{") else text + "\n\nWind grew fast [1]. Solar fell.")
