"""The audited report: the imported text kept whole, every sentence marked, the ledger appended."""

from __future__ import annotations

from research.pipeline.audit import parse_report
from research.pipeline.audit.check import (
    CONFIRMED,
    CONTRADICTED,
    DROPPED,
    RESOURCED,
    UNSUPPORTED,
    UNVERIFIABLE,
    disposition,
    sentence_mark,
)
from review.audited import AuditedReport, AuditRow, render_html, render_markdown

REPORT = """# Heat pumps

Heat pumps move heat rather than make it [1]. They cut household emissions by 90% [2].
Installers report <b>long</b> waiting lists.

### Sources
[1] Physics of heat pumps: https://example.org/physics
[2] Emissions study: https://example.org/emissions
"""


def row(number, text, sentences, mark, **kw):
    fields = {
        "cites": "",
        "citation": "supports",
        "reason": "",
        "quote": "",
        "verdict": "pass",
        "review": "unreviewed",
    }
    fields.update(kw)
    return AuditRow(number=number, text=text, sentences=sentences, mark=mark, **fields)


def audit() -> AuditedReport:
    report = parse_report(REPORT, "markdown")
    rows = (
        row(1, "Heat pumps move heat rather than make it.", (0,), CONFIRMED, quote="moves heat"),
        row(2, "They cut household emissions by 90%.", (1,), CONTRADICTED, citation="contradicts"),
        row(3, "Installers report long waiting lists.", (2,), DROPPED, review="rejected"),
    )
    return AuditedReport(title="Heat pumps", run="r1", report=report, rows=rows)


def test_every_sentence_is_kept_and_marked_even_a_dropped_one():
    text = render_markdown(audit())
    assert "Heat pumps move heat rather than make it [1]. **[confirmed: C1]**" in text
    assert "They cut household emissions by 90% [2]. **[contradicted: C2]**" in text
    assert "Installers report <b>long</b> waiting lists. **[dropped: C3]**" in text
    assert "## Appendix A. Disposition ledger" in text
    assert "| C2 | They cut household emissions by 90%. |" in text
    assert "- [2] Emissions study — https://example.org/emissions" in text


def test_the_html_escapes_the_report_text():
    page = render_html(audit())
    assert "<b>long</b>" not in page and "&lt;b&gt;long&lt;/b&gt;" in page
    assert "[contradicted: C2]" in page


def test_a_sentence_is_as_good_as_its_weakest_claim():
    assert sentence_mark([CONFIRMED, CONTRADICTED]) == CONTRADICTED
    assert sentence_mark([CONFIRMED, RESOURCED]) == RESOURCED
    assert sentence_mark([]) == ""


def test_marks_follow_the_citation_check_and_the_verdict():
    assert disposition("supports", "pass") == CONFIRMED
    assert disposition("supports", "uncertain") == CONFIRMED
    assert disposition("insufficient", "pass") == RESOURCED
    assert disposition("supports", "fail") == CONTRADICTED
    assert disposition("contradicts", "pass") == CONTRADICTED
    assert disposition("unverifiable", "uncertain") == UNVERIFIABLE
    assert disposition("uncited", "uncertain") == UNSUPPORTED
    assert disposition("insufficient", "uncertain") == UNSUPPORTED
    assert disposition("supports", "pass", rejected=True) == DROPPED
    assert disposition("insufficient", "uncertain", rejected=True, rejected_as="unsupported") == (
        DROPPED
    )


def test_a_reviewer_who_rejects_a_claim_as_contradicted_marks_it_contradicted():
    # The verifier families abstained (insufficient / uncertain); the person who read the
    # cited source beside the claim found it says the opposite: that is the mark.
    assert disposition("insufficient", "uncertain", rejected=True, rejected_as="contradicted") == (
        CONTRADICTED
    )
    assert disposition("supports", "pass", rejected=True, rejected_as="contradicted") == (
        CONTRADICTED
    )


def vote(verdict: str, evidence_id: str, score: float, quote: str):
    from research.pipeline.verify.records import Vote

    return Vote("v", "f", "c", evidence_id, verdict, score, "", "", quote=quote)


def test_an_unsettled_citation_shows_the_cited_words_closest_to_a_verdict():
    from research.pipeline.audit.check import closest_words
    from research.pipeline.verify.records import ClaimVerdict, Status

    def verdict(*votes, possible=()):
        return ClaimVerdict(
            "c",
            "",
            Status.UNCERTAIN,
            "",
            0.0,
            votes=list(votes),
            possible_contradictions=dict.fromkeys(possible, "not credible"),
        )

    slower = "Single-threaded code runs about 10% slower."
    support = vote("supports", "1", 0.7, "It runs on the free-threaded build.")
    against = vote("contradicts", "2", 0.6, slower)
    # A contradiction set aside as not credible is what the reviewer must read first.
    assert closest_words(verdict(support, against, possible=("2",))) == ("2", slower)
    # One set aside for another reason (the same passage states the claim) is not shown as
    # such: the best support is.
    assert closest_words(verdict(support, against)) == ("1", support.quote)
    assert closest_words(verdict(vote("insufficient", "1", 0.9, "x"))) == ("", "")


def test_the_why_column_reads_as_sentences():
    base = audit()
    rows = (
        row(
            1,
            "Heat pumps move heat rather than make it.",
            (0,),
            RESOURCED,
            citation="insufficient",
            reason="no family supports it on the cited passage",
            other_sources="Physics notes.",
        ),
    )
    text = render_markdown(AuditedReport(title="t", run="r", report=base.report, rows=rows))
    assert (
        "no family supports it on the cited passage. Supported instead by: Physics notes. |"
    ) in text


def test_an_unsettled_citation_shows_the_cited_sentence_closest_to_the_claim():
    """Where every family abstains, the reviewer still reads the cited source's sentence
    that bears on the claim, not the first one or the one a family happened to quote."""
    import numpy as np

    from research.pipeline.audit.check import closest_sentence
    from research.pipeline.text import passage_fingerprint
    from research.pipeline.verify.records import EvidenceItem

    vocabulary = ["latitude", "influence", "vitamin", "trial", "enrolled", "adults"]

    def encode(texts):  # word counts over a small vocabulary: a stand-in for the encoder
        return np.array([[t.lower().count(w) for w in vocabulary] for t in texts], dtype=float)

    text = (
        "The trial enrolled 2,000 adults in nine countries. "
        "There was no overall influence of latitude on the effect. Ok."
    )
    cited = EvidenceItem("7", text, passage_fingerprint(text))
    claim = "Latitude has a strong influence on the effect of vitamin D."
    assert closest_sentence(claim, [cited], encode) == (
        "7",
        "There was no overall influence of latitude on the effect.",
    )
    short = EvidenceItem("8", "Results", passage_fingerprint("Results"))
    assert closest_sentence(claim, [short], encode) is None  # a heading is not a candidate


def test_a_settled_check_quotes_the_passage_of_its_strongest_vote():
    """The ledger's "The cited source says" is the passage the rationale's "Best:" quotes,
    not whichever supporting passage the verdict listed first."""
    from dataclasses import replace

    from research.pipeline.audit.check import deciding
    from research.pipeline.verify.records import ClaimVerdict, Status

    weak = vote("supports", "1", 0.55, "The first is a switch to biased reference counting.")
    strong = vote("supports", "2", 0.70, "The largest contribution is biased reference counting.")
    shadow = replace(vote("supports", "1", 0.99, "x"), shadow=True)  # shown, never counted
    verdict = ClaimVerdict("c", "", Status.PASS, "", 0.7, votes=[weak, strong, shadow])
    assert deciding(verdict, ["1", "2"], "supports") == "2"
    assert deciding(verdict, ["1"], "supports") == "1"
    assert deciding(verdict, [], "supports") == ""
