"""Mining outside medicine: news, economics and software texts keep their findings.

Result and conclusion detection, relevance and design classification must rest on signals
that hold in any domain; these fixtures check that mining does not collapse on texts
without structured abstracts, p values or study designs.
"""

from __future__ import annotations

import pytest

from research.pipeline.claims import PassageInput, RunInput, SubquestionInput, mine_run
from research.pipeline.text import passage_fingerprint
from research.providers.embedder import Embedder

NEWS = (
    "Central bank holds rates",
    "The central bank held its policy rate at 5.25 percent on Wednesday. Officials met in "
    "Frankfurt for two days. Inflation fell to 2.4 percent in March, down from 2.9 percent in "
    "February, the statistics office said. Analysts had expected a cut of 25 basis points. "
    "The decision was unanimous, the bank's president told reporters.",
)
ECONOMICS = (
    "Minimum wages and teen employment: evidence from county pairs",
    "We compare contiguous county pairs that straddle state borders between 1990 and 2006. "
    "Data come from the Quarterly Census of Employment and Wages. Minimum wage increases "
    "raised earnings of restaurant workers by 2.1 percent. We find no significant effect of "
    "minimum wage increases on teen employment. Our estimates rule out job losses larger "
    "than 1.2 percent per 10 percent increase in the minimum wage.",
)
SOFTWARE = (
    "Release 2.0 performance report",
    "## Results\n\nThe new garbage collector reduced p99 latency from 80 ms to 12 ms compared "
    "with release 1.9. Memory use grew by 6 percent. Build times were unchanged.\n\n"
    "## Method\n\nWe ran the benchmark suite on eight identical machines. Each test was "
    "repeated ten times.",
)


@pytest.fixture(scope="module")
def encode():
    return Embedder().encode


def passage(pid: str, title: str, text: str) -> PassageInput:
    return PassageInput(pid, text, passage_fingerprint(text), source_key=pid, title=title)


def mined(question: str, doc: tuple[str, str], encode):
    sq = SubquestionInput("s1", question, (passage("d1", *doc),), ("q",))
    result = mine_run(RunInput(question, (sq,)), encode=encode).results["s1"]
    return {c.text: c for c in result.claims}, {d.anchor.quote: d for d in result.dropped}


def test_it_keeps_the_findings_of_a_news_report(encode):
    kept, dropped = mined("Did inflation fall while interest rates were held?", NEWS, encode)
    assert any("Inflation fell to 2.4 percent" in text for text in kept)
    assert any("held its policy rate" in text for text in kept)
    assert all(c.relevance is not None for c in kept.values())
    assert "Officials met in Frankfurt for two days." not in kept


def test_it_keeps_an_economics_null_result_and_drops_its_methods(encode):
    question = "Do minimum wage increases reduce teen employment?"
    kept, dropped = mined(question, ECONOMICS, encode)
    null = next(c for text, c in kept.items() if "no significant effect" in text)
    assert null.facets is not None and null.facets.direction == "no effect"
    assert "teen employment" in null.facets.outcome
    assert any("raised earnings" in text for text in kept)
    method = dropped["Data come from the Quarterly Census of Employment and Wages."]
    assert "not a finding" in method.reason or method.reason.startswith("off-topic")
    # The study's design sentence is no result: the role model reads it as an aim (p 0.73),
    # below the threshold that drops a sentence, so it may stay as a statement, never more.
    design = next(
        c for t, c in {**kept, **dropped}.items() if t.startswith("We compare contiguous")
    )
    assert design.role == "statement"


def test_it_uses_a_markdown_heading_as_the_structure_label(encode):
    from research.pipeline.claims.mine import labelled_spans

    doc = passage("d1", *SOFTWARE)
    labels = {doc.text[a:b]: label for a, b, label in labelled_spans(doc)}
    assert labels["Each test was repeated ten times."] == "Method"
    kept, dropped = mined("Did release 2.0 reduce latency?", SOFTWARE, encode)
    assert any("reduced p99 latency" in text for text in kept)
    assert not any("repeated ten times" in text for text in kept)
