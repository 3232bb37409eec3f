"""Patterns that read formats rather than prose: identifiers, query syntax, our own output.

DOIs and arXiv ids in text, URLs and paths (read by :mod:`research.pipeline.identity`),
arXiv's query field prefixes (:mod:`research.providers.search.arxiv`) and where a
verifier's rationale turns to its internals (:mod:`reports.exports.document`). Pure and
deterministic.
"""

from __future__ import annotations

import re

# --- DOIs and arXiv ids (research.pipeline.identity) -------------------------------------

_DOI_CORE = r"10\.\d{4,9}/"
# A DOI in free text, and in a URL path or query value (where "?", "#", "&" end it).
DOI_TEXT = re.compile(_DOI_CORE + r"[^\s\"'<>]+", re.IGNORECASE)
DOI_URL = re.compile(_DOI_CORE + r"[^\s\"'<>?#&]+", re.IGNORECASE)
# A publisher's DOI path: "/doi/10.…", "/doi/abs/10.…", "/doi/pdf/10.…".
DOI_PATH = re.compile(r"/doi/(?:(?:abs|full|pdf|epdf|pdfdirect|book|reader)/)?(10\.\d{4,9}/.+)")
# What a given DOI must be to become a ``doi:`` identity: the DOI and nothing else.
DOI_VALID = re.compile(r"^10\.\d{4,9}/\S+$")
# arXiv's DataCite DOI: "10.48550/arXiv.<id>" is the arXiv paper itself.
ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)

# arXiv ids, new ("2101.00001v2") and old ("hep-th/9901001", "math.GT/0309136").
_ARXIV_NEW = r"\d{4}\.\d{4,5}(?:v\d+)?"
_ARXIV_OLD = r"[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?"
ARXIV_ID = re.compile(rf"^(?:{_ARXIV_NEW}|{_ARXIV_OLD})$", re.IGNORECASE)
# An arXiv id in text: "arXiv:2101.00001", an arxiv.org link, or its DataCite DOI.
ARXIV_TEXT = re.compile(
    rf"(?:arxiv\s*:\s*|arxiv\.org/(?:abs|pdf|html)/|10\.48550/arxiv\.)({_ARXIV_NEW}|{_ARXIV_OLD})(?!\d)",
    re.IGNORECASE,
)
# An arxiv.org path: "/abs/<id>", "/pdf/<id>", "/html/<id>", "/format/<id>", "/ps/<id>".
ARXIV_PATH = re.compile(rf"^/(?:abs|pdf|html|format|ps)/({_ARXIV_NEW}|{_ARXIV_OLD})(?!\d)")

# --- arXiv query syntax (research.providers.search.arxiv) --------------------------------

# A query that already uses arXiv's field prefixes ("ti:", "au:", "abs:", "cat:" …) is
# passed through unchanged.
ARXIV_FIELD_PREFIX = re.compile(r"\b(?:ti|au|abs|co|jr|cat|rn|id|all):", re.IGNORECASE)

# --- verifier rationales (reports.exports.document.in_words) ------------------------------

# Where a verifier's rationale turns from its verdict to its internals (vote scores,
# thresholds, evidence ids, families that did not run): the appendix stops there.
RATIONALE_INTERNALS = re.compile(
    r"\s(?:Best|Strongest|Not run|Not counted|Votes|Families):|\s—\s*P\(|\s\(\d+ other passage"
)
