"""Reports as five engines write them, plus an HTML export and a footnoted paper summary.

Each fixture in ``tests/fixtures/audit/`` follows its engine's documented or commonly seen
output; the tests pin every sentence's claim text, which sources it cites, and the findings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from research.pipeline.audit import Citation, ParsedReport, ParseFinding, parse_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "audit"
ALL = sorted(path.name for path in FIXTURES.iterdir())


def _parse(name: str) -> ParsedReport:
    return parse_report((FIXTURES / name).read_bytes(), filename=name)


def _texts(report: ParsedReport) -> list[str]:
    return [sentence.text for sentence in report.sentences]


def _urls(report: ParsedReport) -> list[list[str]]:
    return [[c.url for c in sentence.citations] for sentence in report.sentences]


def test_it_reads_open_deep_research_numbered_markers_and_sources_list():
    report = _parse("open_deep_research.md")

    assert report.format == "markdown"
    assert report.title == "Small Modular Reactors: Status and Prospects"
    assert _texts(report) == [
        "Small modular reactors are nuclear fission reactors with a power capacity of up to "
        "300 MW(e) per unit.",
        "Their components are designed to be factory-built and shipped to the site as modules.",
        "In 2023 the U.S. Nuclear Regulatory Commission certified NuScale's 50 MWe design, the "
        "first small modular reactor design it had certified.",
        "The U.S. Department of Energy has supported the development of such designs since 2012.",
        "Proponents argue that smaller units lower upfront capital costs.",
        "Critics note that no small modular reactor has yet operated commercially in the "
        "United States.",
    ]
    assert [[c.label for c in s.citations] for s in report.sentences] == [
        ["1"], ["1", "2"], ["3"], ["2"], ["1", "4"], ["4"]
    ]  # fmt: skip
    assert report.references[0] == Citation(
        "1",
        "https://www.iaea.org/newscenter/news/what-are-small-modular-reactors-smrs",
        title="What are Small Modular Reactors (SMRs)? - IAEA",
    )
    assert [r.title for r in report.references[1:]] == [
        "Advanced Small Modular Reactors (SMRs) | Department of Energy",
        "NuScale US600 design certification | NRC",
        "Small modular reactor - Wikipedia",
    ]
    # The marker after the full stop belongs to the sentence it ends.
    assert report.sentences[5].raw.endswith("United States.[4]")
    assert report.sentences[1].markers == ("[1]", "[2]")
    assert report.findings == ()


def test_it_reads_gpt_researcher_inline_links_against_its_apa_references():
    report = _parse("gpt_researcher.md")

    noaa = "https://www.noaa.gov/news-release/noaa-confirms-4th-global-coral-bleaching-event"
    gbrmpa = "https://www2.gbrmpa.gov.au/learn/reef-health"
    aims = "https://www.aims.gov.au/research-topics/environmental-issues/coral-bleaching"
    wiki = "https://en.wikipedia.org/wiki/Coral_bleaching"
    assert _texts(report) == [
        "Coral bleaching happens when corals under heat stress expel the algae that live in "
        "their tissues.",
        "In April 2024 NOAA confirmed the fourth global coral bleaching event on record.",
        "According to the Great Barrier Reef Marine Park Authority, the reef has bleached "
        "several times since 2016.",
        "Aerial surveys in 2024 recorded bleaching across all three regions of the reef.",
        "Bleached corals can recover if temperatures fall, but repeated events leave little "
        "time for recovery.",
    ]
    assert _urls(report) == [[wiki], [noaa], [gbrmpa], [gbrmpa, aims], []]
    # An inline link to a listed URL cites the reference itself, with its APA title.
    assert report.sentences[1].citations[0] == report.references[2]
    assert report.references[2].title == (
        "National Oceanic and Atmospheric Administration. (2024, April 15). NOAA confirms 4th "
        "global coral bleaching event. NOAA"
    )
    assert [r.label for r in report.references] == [aims, gbrmpa, noaa, wiki]
    assert report.findings == ()


def test_it_reads_perplexity_json_where_marker_n_is_citation_n_minus_one():
    report = _parse("perplexity.json")

    nasa = "https://science.nasa.gov/mission/webb/"
    wiki = "https://en.wikipedia.org/wiki/James_Webb_Space_Telescope"
    esa = "https://www.esa.int/Science_Exploration/Space_Science/Webb"
    first = "https://www.nasa.gov/webbfirstimages/"
    assert report.format == "json"
    assert report.title == "James Webb Space Telescope"
    assert _texts(report) == [
        "The James Webb Space Telescope launched on 25 December 2021 on an Ariane 5 rocket.",
        "It observes mainly in the infrared, which lets it see through dust clouds.",
        "Its primary mirror is 6.5 metres across and is made of 18 hexagonal segments.",
        "Webb orbits the Sun near the second Lagrange point, about 1.5 million kilometres from "
        "Earth.",
        "Its first full-colour images were released in July 2022.",
    ]
    assert _urls(report) == [[nasa, wiki], [nasa], [wiki, esa], [wiki], [nasa, first]]
    assert [r.label for r in report.references] == ["1", "2", "3", "4"]
    assert report.findings == ()


def test_it_reads_chatgpt_deep_research_links_and_flags_its_internal_source_markers():
    report = _parse("chatgpt_deep_research.md")

    assert _texts(report) == [
        "Summary: Beekeepers in the United States keep losing a large share of their colonies "
        "each winter, and parasites are a leading cause.",
        "Beekeepers in the United States lost an estimated 48 percent of their managed colonies "
        "between April 2022 and April 2023.",
        "The U.S. Department of Agriculture also surveys colony losses every quarter.",
        "The parasitic mite Varroa destructor feeds on bees and spreads viruses between them.",
        "Pesticide exposure and poor nutrition add to the stress on colonies.",
    ]
    assert _urls(report) == [
        [],
        [
            "https://beeinformed.org/2023/06/22/united-states-honey-bee-colony-losses-2022-2023-"
            "preliminary-results-from-the-bee-informed-partnership/"
        ],
        ["https://www.nass.usda.gov/Surveys/Guide_to_NASS_Surveys/Bee_and_Honey/"],
        ["https://en.wikipedia.org/wiki/Varroa_destructor"],
        [],
    ]
    varroa = report.sentences[3].citations[0]
    assert (varroa.label, varroa.title) == (varroa.url, "en.wikipedia.org")
    assert report.references == ()
    # 【3†source】 points into the engine's own tool output, which the text does not carry.
    assert report.sentences[4].unresolved == ("【3†source】",)
    assert report.findings == (
        ParseFinding(
            "dangling-marker", "【3†source】 names 3, but the report lists no references", "3", 4
        ),
    )


def test_it_reads_gemini_numbers_glued_to_full_stops_and_its_works_cited():
    report = _parse("gemini_deep_research.md")

    usgs = "https://pubs.usgs.gov/periodicals/mcs2024/mcs2024-lithium.pdf"
    wiki = "https://en.wikipedia.org/wiki/Lithium"
    iea = "https://www.iea.org/reports/global-ev-outlook-2024"
    assert _texts(report) == [
        "Australia was the world's largest producer of lithium in 2023.",
        "Chile holds the largest lithium reserves of any country.",
        "Most Australian lithium is mined from hard-rock spodumene deposits, while Chile "
        "extracts it from brines.",
        "Electric vehicle batteries account for most of the growth in lithium demand.",
        "Nearly 14 million new electric cars were registered worldwide in 2023.",
    ]
    assert _urls(report) == [[usgs], [usgs], [wiki], [iea], [iea]]
    assert (
        report.sentences[0].raw == "Australia was the world's largest producer of lithium in 2023.1"
    )
    # "accessed <date>" is when the engine read it, not part of the title.
    assert [r.title for r in report.references] == [
        "Lithium - Mineral Commodity Summaries 2024, U.S. Geological Survey",
        "Lithium - Wikipedia",
        "Global EV Outlook 2024 - Analysis - IEA",
    ]
    assert report.findings == ()


def test_it_reads_an_html_export_with_superscripts_links_and_an_ordered_reference_list():
    report = _parse("html_export.html")

    who = "https://www.who.int/news-room/fact-sheets/detail/antimicrobial-resistance"
    assert report.format == "html"
    assert report.title == "Antimicrobial Resistance: A Brief Review"
    assert [b.kind for b in report.blocks] == ["heading", "paragraph", "paragraph"]
    assert _texts(report) == [
        "Antimicrobial resistance occurs when bacteria, viruses, fungi and parasites no longer "
        "respond to medicines.",
        "Bacterial resistance was directly responsible for an estimated 1.27 million deaths in "
        "2019.",
        "The misuse and overuse of antimicrobials in humans, animals and plants are the main "
        "drivers of resistance.",
        "The Global Antimicrobial Resistance and Use Surveillance System collects national data "
        "on resistance.",
    ]
    assert _urls(report) == [[who], [""], [who], ["https://www.who.int/initiatives/glass"]]
    lancet = report.sentences[1].citations[0]
    assert (lancet.label, lancet.doi) == ("2", "10.1016/s0140-6736(21)02724-0")
    assert report.findings == ()


def test_it_reads_footnotes_with_dois_and_arxiv_ids():
    report = _parse("footnotes_doi_arxiv.md")

    assert _texts(report) == [
        "The transformer architecture replaced recurrence with self-attention.",
        "Pre-training a bidirectional transformer on unlabelled text improved many language "
        "benchmarks.",
        "Scaling a language model to 175 billion parameters made few-shot learning from prompts "
        "possible.",
        "Deep learning had already transformed speech and image recognition before transformers "
        "appeared.",
        "AlphaFold predicted protein structures with near-experimental accuracy in CASP14.",
    ]
    assert [(c.label, c.doi, c.arxiv_id) for s in report.sentences for c in s.citations] == [
        ("^1", "", "1706.03762"),
        ("^2", "", "1810.04805"),
        ("^3", "", "2005.14165"),
        ("^4", "10.1038/nature14539", ""),
        ("^5", "10.1038/s41586-021-03819-2", ""),
    ]
    assert report.references[3].title == (
        "LeCun, Y., Bengio, Y. and Hinton, G. (2015). Deep learning. Nature 521, 436–444"
    )
    assert [b.kind for b in report.blocks] == ["heading", "paragraph", "paragraph"]
    assert report.findings == ()


@pytest.mark.parametrize("name", ALL)
def test_it_round_trips_every_fixture_through_json(name):
    report = _parse(name)

    assert ParsedReport.from_json(report.to_json()) == report


@pytest.mark.parametrize("name", ALL)
def test_it_keeps_every_sentence_inside_its_block(name):
    report = _parse(name)

    for sentence in report.sentences:
        block = report.blocks[sentence.block]
        assert sentence.index in block.sentences
        assert sentence.raw in block.text


def test_a_citation_marker_ends_a_sentence_whatever_the_next_one_starts_with():
    """The splitter wants a capital or a digit after a full stop; a cited sentence ends at
    its marker, so a next sentence starting with a lower-case name or a symbol is its own."""
    report = parse_report(
        "# R\n\nVitamin D lowers falls [1]. mcm 5 s 2 U is modified in yeast [2]. "
        "The effect was small.[1] β-sheet formation needs zinc [2].\n\n"
        "### Sources\n[1] A: https://a.org/1\n[2] B: https://b.org/2\n"
    )
    assert [(s.text, [c.label for c in s.citations]) for s in report.sentences] == [
        ("Vitamin D lowers falls.", ["1"]),
        ("mcm 5 s 2 U is modified in yeast.", ["2"]),
        ("The effect was small.", ["1"]),
        ("β-sheet formation needs zinc.", ["2"]),
    ]
