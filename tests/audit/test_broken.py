"""Broken citations become findings or uncited sentences; only non-reports raise."""

from __future__ import annotations

import json

import pytest

from research.pipeline.audit import (
    MAX_REPORT_CHARS,
    Citation,
    ParsedReport,
    ParseFinding,
    ReportParseError,
    parse_report,
)

REFERENCES = "\n\n## References\n\n[1] Wind report: https://example.org/wind\n"


def _cited(report: ParsedReport) -> list[list[str]]:
    return [[c.label for c in sentence.citations] for sentence in report.sentences]


def test_it_reports_a_dangling_marker():
    report = parse_report("Wind power grew fast [1]. Solar grew faster [7]." + REFERENCES)

    assert _cited(report) == [["1"], []]
    assert report.sentences[1].markers == report.sentences[1].unresolved == ("[7]",)
    assert report.findings == (
        ParseFinding("dangling-marker", "[7] names 7, which is not in the reference list", "7", 1),
    )


def test_it_cites_urls_when_there_is_no_reference_list():
    report = parse_report("Wind grew fast (https://example.org/wind). See https://example.org/sun.")

    assert [s.text for s in report.sentences] == ["Wind grew fast.", "See."]
    assert report.sentences[0].citations == (
        Citation("https://example.org/wind", "https://example.org/wind"),
    )
    assert report.sentences[0].raw == "Wind grew fast (https://example.org/wind)."
    assert report.references == ()
    assert report.findings == ()


def test_it_keeps_the_first_of_two_references_with_one_number():
    report = parse_report(
        "Wind grew [1]. Solar grew [2].\n\nSources:\n"
        "[1] A: https://a.example.org/x\n[1] B: https://b.example.org/y\n"
        "[2] C: https://c.example.org/z\n"
    )

    assert [s.citations[0].url for s in report.sentences] == [
        "https://a.example.org/x",
        "https://c.example.org/z",
    ]
    assert [r.title for r in report.references] == ["A", "B", "C"]
    assert report.findings == (
        ParseFinding(
            "duplicate-reference",
            "two references are labelled 1; the first (A) is the one markers cite",
            "1",
        ),
    )


def test_it_reports_a_reference_without_a_link():
    report = parse_report(
        "Wind grew [1].\n\n## References\n1. Smith, J. (2020). Wind in Europe. Energy Journal.\n"
    )

    assert report.sentences[0].citations == (
        Citation("1", title="Smith, J. (2020). Wind in Europe. Energy Journal"),
    )
    assert [f.kind for f in report.findings] == ["reference-without-link"]


def test_it_reads_an_unterminated_link_and_reports_it():
    report = parse_report("Wind grew fast ([IEA](https://www.iea.org/reports/wind. Solar too.")

    assert [s.text for s in report.sentences] == ["Wind grew fast.", "Solar too."]
    assert [c.url for c in report.sentences[0].citations] == ["https://www.iea.org/reports/wind"]
    assert report.findings == (
        ParseFinding(
            "malformed-url",
            "the link to https://www.iea.org/reports/wind is not closed with ')'",
            "[IEA](https://www.iea.org/reports/wind",
            0,
        ),
    )


def test_it_reads_an_empty_reference_list_as_no_references():
    report = parse_report("# Wind\n\nWind grew [1].\n\n## References\n")

    assert report.references == ()
    assert [b.kind for b in report.blocks] == ["heading", "paragraph"]
    assert report.findings == (
        ParseFinding("dangling-marker", "[1] names 1, but the report lists no references", "1", 0),
    )


def test_it_takes_markers_out_of_headings_without_citing_anything():
    report = parse_report(
        "# Wind [1]\n\n## Growth [^2]\n\nWind grew [1].\n\n[1]: https://w.example.org\n"
    )

    assert report.title == "Wind"
    assert [b.text for b in report.blocks] == ["Wind [1]", "Growth [^2]", "Wind grew [1]."]
    assert [b.sentences for b in report.blocks] == [(), (), (0,)]
    assert report.findings == ()


def test_it_reports_malformed_urls_and_unused_references():
    report = parse_report(
        "Wind grew ([IEA](https//www.iea.org)). Solar grew (https://nodot/x).\n\n"
        "## Sources\n- [1] Old page: htp://nope\n"
    )

    assert [s.text for s in report.sentences] == ["Wind grew.", "Solar grew."]
    assert [s.unresolved for s in report.sentences] == [
        ("[IEA](https//www.iea.org)",),
        ("https://nodot/x",),
    ]
    assert [(f.kind, f.label, f.sentence) for f in report.findings] == [
        ("reference-without-link", "1", None),
        ("malformed-url", "[IEA](https//www.iea.org)", 0),
        ("malformed-url", "https://nodot/x", 1),
        ("unused-reference", "1", None),
    ]


def test_it_reports_a_json_citation_index_out_of_range():
    data = {"text": "Wind grew [1]. Solar grew [3].", "citations": ["https://example.org/a"]}
    report = parse_report(json.dumps(data))

    assert _cited(report) == [["1"], []]
    assert report.findings == (
        ParseFinding("dangling-marker", "[3] names 3, which is not in the reference list", "3", 1),
    )


def test_it_reads_perplexitys_choices_and_search_results():
    data = {
        "choices": [{"message": {"role": "assistant", "content": "Wind grew [1][2]."}}],
        "citations": ["https://example.org/w", "not a url"],
        "search_results": [{"title": "Wind", "url": "https://example.org/w", "date": None}],
    }
    report = parse_report(json.dumps(data))

    assert report.references == (
        Citation("1", "https://example.org/w", title="Wind"),
        Citation("2"),
    )
    assert [f.kind for f in report.findings] == ["malformed-url", "reference-without-link"]


@pytest.mark.parametrize(
    "data",
    ['{"citations": []}', '{"text": 5}', '{"text": "x", "citations": "https://a.org"}',
     '{"text": "x", "citations": [3]}', '{"text": "x"', "[1, 2]"],
)  # fmt: skip
def test_it_refuses_json_of_another_shape(data):
    with pytest.raises(ReportParseError, match="JSON report must be an object"):
        parse_report(data, format="json")


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("", "empty"),
        (" \n\t \n", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        ("text with a \x00 in it", "binary"),
        (b"caf\xe9 latte", "not UTF-8"),
        ("x" * (MAX_REPORT_CHARS + 1), "over the 500,000"),
        (b"x" * (4 * MAX_REPORT_CHARS + 1), "over the 500,000"),
    ],
)
def test_it_refuses_what_is_not_a_report(data, says):
    with pytest.raises(ReportParseError, match=says):
        parse_report(data)


def test_it_reads_locators_ranges_and_superscripts():
    report = parse_report(
        "Attention replaced recurrence [vaswani2017:6]. Training sped up [Source 1, p. 9]. "
        "Studies agree [1-3]. Wind grew². Some disagree [2–5].\n\n"
        "[vaswani2017]: https://arxiv.org/abs/1706.03762\n"
        "## References\n1. https://a.example.org\n2. https://b.example.org\n3. https://c.example.org\n"
    )

    assert [[(c.label, c.page) for c in s.citations] for s in report.sentences] == [
        [("vaswani2017", "6")],
        [("1", "9")],
        [("1", ""), ("2", ""), ("3", "")],
        [("2", "")],
        [("2", ""), ("3", "")],
    ]
    assert report.sentences[0].citations[0].arxiv_id == "1706.03762"
    assert [(f.kind, f.label) for f in report.findings] == [
        ("dangling-marker", "4"),
        ("dangling-marker", "5"),
    ]


def test_it_reads_plain_text_with_a_sources_paragraph():
    report = parse_report(
        "Wind power in 2023\n\nWind power grew by 12 percent in 2023 [1]. Costs fell.[2]\n\n"
        "Sources:\n1. Global Wind Report - https://gwec.net/global-wind-report-2024/\n"
        "2. Lazard LCOE, https://www.lazard.com/research-insights/levelized-cost-of-energyplus/\n",
        format="text",
    )

    assert report.title == "Wind power in 2023"
    assert [s.text for s in report.sentences] == [
        "Wind power grew by 12 percent in 2023.",
        "Costs fell.",
    ]
    assert [r.title for r in report.references] == ["Global Wind Report", "Lazard LCOE"]
    assert _cited(report) == [["1"], ["2"]]


def test_it_leaves_numbers_that_are_no_markers_alone():
    """A glued number or a superscript that names no reference is text, not a marker."""
    report = parse_report(
        "The area is 5 km². Growth was 4.5 percent. It ended in 2023.1 Then it rose."
    )

    assert [s.text for s in report.sentences] == [
        "The area is 5 km².",
        "Growth was 4.5 percent.",
        "It ended in 2023.1 Then it rose.",
    ]
    assert report.findings == ()


def test_it_numbers_an_html_footnote_list_whose_items_hold_paragraphs():
    """Pandoc's footnotes: <section class="footnotes"><ol><li><p>…</p></li></ol>."""
    report = parse_report(
        "<html><body><p>Wind grew.<a href='#fn1' class='footnote-ref'><sup>1</sup></a></p>"
        "<section class='footnotes'><hr/><ol><li id='fn1'><p>Smith. "
        "<a href='https://doi.org/10.1000/abc'>https://doi.org/10.1000/abc</a></p></li></ol>"
        "</section></body></html>"
    )

    assert report.references == (
        Citation("1", "https://doi.org/10.1000/abc", "10.1000/abc", title="Smith"),
    )
    assert report.sentences[0].citations == report.references
    assert report.findings == ()


def test_it_keeps_a_table_cell_that_says_notes_in_the_body():
    report = parse_report(
        "| Notes | Wind grew [1]. |\n|---|---|\n| Notes | Solar grew [1]. |\n\n[1]: https://a.example.org\n"
    )

    assert [s.text for s in report.sentences] == ["Notes", "Solar grew."]
    assert [r.label for r in report.references] == ["1"]


def test_it_reports_a_dangling_footnote_and_leaves_an_unknown_name_as_text():
    report = parse_report(
        "Wind grew.[^9] Solar grew [sic]. Hydro held [smith2020:4].\n\n[^1]: Smith.\n"
    )

    assert [s.text for s in report.sentences] == [
        "Wind grew.",
        "Solar grew [sic].",
        "Hydro held [smith2020:4].",
    ]
    assert [(f.kind, f.label, f.sentence) for f in report.findings] == [
        ("reference-without-link", "^1", None),
        ("dangling-marker", "^9", 0),
        ("unused-reference", "^1", None),
    ]
