from __future__ import annotations

import json
from typing import Any

from reports.exports.citations import bibtex, bibtex_escape, csl_json, reference_text
from reports.exports.records import BibEntry

FIELDS: dict[str, Any] = {
    "number": 1,
    "key": "src1",
    "canonical_id": "doi:10.1/x_y",
    "title": "Hostile } title with 50% & \\input{evil}",
    "authors": ["Ada Lovelace", "Alan Turing"],
    "publisher": "Journal of Tests",
    "url": "https://example.org/a_b?c=1#frag",
    "doi": "10.1/x_y",
    "arxiv_id": "",
    "source_type": "paper",
    "published_date": "2021-05-04",
    "year": "2021",
    "venue": "Journal of Tests",
    "identifier": "doi:10.1/x_y",
    "snapshots": [{"sha256": "ab" * 32, "fetched_at": "2024-01-02T03:04:05+00:00"}],
}
ENTRY = BibEntry(**FIELDS, reference=reference_text(**FIELDS))


def test_it_escapes_tex_specials_so_a_title_cannot_close_its_field():
    escaped = bibtex_escape(ENTRY.title)
    assert escaped == (
        r"Hostile \textbraceright{} title with 50\% \& "
        r"\textbackslash{}input\textbraceleft{}evil\textbraceright{}"
    )


def test_it_keeps_urls_verbatim_but_strips_braces():
    assert bibtex_escape("https://x.org/a_b?c=1#f}{", verbatim=True) == "https://x.org/a_b?c=1#f"


def test_it_writes_a_bibtex_article_with_the_snapshot_hash():
    entry = bibtex([ENTRY])
    assert entry.startswith("@article{src1,\n")
    assert "  author = {Ada Lovelace and Alan Turing}," in entry
    assert "  year = {2021}," in entry
    assert "  journal = {Journal of Tests}," in entry
    assert "  url = {https://example.org/a_b?c=1#frag}," in entry
    assert "ab" * 32 in entry
    assert entry.count("{") == entry.count("}")


def test_it_writes_csl_json_items():
    [item] = json.loads(csl_json([ENTRY]))
    assert item["type"] == "article-journal"
    assert item["issued"] == {"date-parts": [[2021, 5, 4]]}
    assert item["accessed"] == {"date-parts": [[2024, 1, 2]]}
    assert item["author"] == [{"literal": "Ada Lovelace"}, {"literal": "Alan Turing"}]
    assert item["DOI"] == "10.1/x_y"


def test_it_formats_a_plain_reference():
    assert ENTRY.reference == (
        "Ada Lovelace, Alan Turing (2021). Hostile } title with 50% & \\input{evil}. "
        "Journal of Tests. doi:10.1/x_y."
    )


UNKNOWN: dict[str, Any] = {
    **FIELDS,
    "title": "Estimation of optimal serum concentrations of 25-hydroxyvitamin D",
    "canonical_id": "corpus:scifact:4462079",
    "authors": [],
    "publisher": "",
    "url": "",
    "doi": "",
    "published_date": "",
    "year": "",
    "venue": "",
    "identifier": "scifact corpus, document 4462079",
}
UNKNOWN_ENTRY = BibEntry(**UNKNOWN, reference=reference_text(**UNKNOWN))


def test_it_says_what_the_metadata_does_not_have_instead_of_inventing_it():
    assert UNKNOWN_ENTRY.reference == (
        "Authors unknown (year unknown). Estimation of optimal serum concentrations of "
        "25-hydroxyvitamin D. Venue unknown. scifact corpus, document 4462079."
    )
    entry = bibtex([UNKNOWN_ENTRY])
    assert "author =" not in entry and "year =" not in entry and "journal =" not in entry
    assert "note = {scifact corpus, document 4462079; authors, year and venue not in the " in entry
    [item] = json.loads(csl_json([UNKNOWN_ENTRY]))
    assert "author" not in item and "issued" not in item and "container-title" not in item
    assert item["note"].startswith("scifact corpus, document 4462079; authors, year and venue")


def test_it_shortens_a_long_author_list_in_print_only():
    names = [f"Author {n}" for n in range(1, 10)]
    fields = {**FIELDS, "authors": names}
    entry = BibEntry(**fields, reference=reference_text(**fields))
    assert entry.reference.startswith(
        "Author 1, Author 2, Author 3, Author 4, Author 5, Author 6, et al (2021). "
    )
    assert " and ".join(names) in bibtex([entry])
    assert len(json.loads(csl_json([entry]))[0]["author"]) == 9


def test_it_writes_the_venue_as_the_journal_in_csl_json():
    [item] = json.loads(csl_json([ENTRY]))
    assert item["container-title"] == "Journal of Tests"
    assert item["issued"] == {"date-parts": [[2021, 5, 4]]}
