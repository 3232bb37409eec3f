"""How reports written by research engines cite their sources: markers, links, reference lists.

Read by :mod:`research.pipeline.audit` to take another engine's report apart:

- :data:`INLINE_CITATION`: every inline citation form in one pattern, one named group per
  form (numbered ``[1]``, ``[1, 3]``, ``[1-3]``; footnotes ``[^1]``; locators
  ``[smith2020:12]`` and ``[Source 3, p. 12]``; named ``[smith2020]``; ``【1†source】``;
  ``<sup>1</sup>`` and Unicode superscripts; a number glued to a full stop, ``… rose.1``;
  Markdown links, unterminated links and ``<a href>``; ``doi:10.…``; ``arXiv:…``; bare and
  ``<…>`` URLs; other inline HTML tags, which carry no citation). Every repetition is
  bounded, so a scan is linear in the text.
- :data:`REFERENCE_HEADINGS` and :func:`is_reference_heading`: the headings a reference
  list sits under ("References", "Sources", "Works cited" …).
- :data:`ACCESSED`: a trailing "accessed <date>" / "retrieved <date>" of a reference line.
- :data:`HTML_START` and :data:`MARKDOWN_CUE`: what makes a text HTML or Markdown when its
  format is not given.

The DOI and arXiv parts are :mod:`research.pipeline.language.formats`'s patterns. Pure and
deterministic.
"""

from __future__ import annotations

import re

from research.pipeline.language.formats import ARXIV_TEXT, DOI_TEXT
from research.pipeline.language.sentences import SENTENCE_END

# --- inline citations ----------------------------------------------------------------------

# A list of reference numbers: "1", "1, 3", "1-3", "1–3", "2,5".
_NUMBERS = r"\d{1,4}(?:[ \t]*[,\u2013\-][ \t]*\d{1,4}){0,40}"
_SUPERSCRIPT = "[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]"
# A URL's characters: no whitespace, brackets, quotes, table pipes or CJK brackets; one level
# of balanced parentheses is kept ("…/wiki/Mercury_(planet)").
_URL_CHAR = r"[^\s<>()\[\]{}\"'`|\\\u3010\u3011]"
_URL = rf"https?://(?:{_URL_CHAR}|\({_URL_CHAR}{{0,200}}\)){{1,4000}}"
_LINK_TARGET = r"<[^<>\n]{0,4000}>|(?:[^\s()<>]|\([^\s()<>]{0,200}\)){0,4000}"
_LINK_TITLE = r"(?:[ \t]+(?:\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'))?"

INLINE_CITATION = re.compile(
    # A Markdown link "[text](target)" (an image when "!" leads), then one whose ")" is
    # missing ("[text](https://…" and no close).
    rf"(?P<link>(?P<bang>!)?\[(?P<ltext>[^\[\]\n]{{0,500}})\]"
    rf"\([ \t]*(?P<ltarget>{_LINK_TARGET}){_LINK_TITLE}[ \t]*\))"
    rf"|(?P<open>\[(?P<otext>[^\[\]\n]{{0,500}})\]\([ \t]*(?P<otarget>https?://[^\s()<>\[\]]{{1,4000}}))"
    # An HTML link inside Markdown: <a href="…">text</a>.
    rf"|<a\s[^<>]{{0,500}}?href=[\"']?(?P<ahref>[^\"'\s<>]{{1,4000}})[\"']?[^<>]{{0,500}}>(?P<atext>[^<]{{0,500}})</a>"
    # Footnote "[^1]"; locator "[3:12]", "[smith2020:12]", "[Source 3, p. 12]"; numbers
    # "[1]", "[1, 3]", "[1-3]"; a named reference "[smith2020]".
    rf"|\[\^(?P<foot>[^\[\]\s]{{1,60}})\]"
    rf"|\[(?:source[ \t]+)?(?P<loc>[\w.\-]{{1,60}}?)(?:[ \t]*:[ \t]*|,[ \t]*(?:pp?\.|pages?)[ \t]*)"
    rf"(?P<page>[\w\u2013\-]{{1,20}}(?:[ \t]*[\u2013\-][ \t]*\w{{1,10}})?)\]"
    rf"|\[(?P<nums>{_NUMBERS})\]"
    rf"|\[(?P<word>[A-Za-z][\w.\-]{{0,60}})\](?![(\[:])"
    # ChatGPT's "【1†source】" / "【4:0†source】"; superscripts; a number glued to a full stop
    # ("… in 2023.1 Chile …": the next sentence, or the block's end, must follow).
    rf"|\u3010(?P<chat>\d{{1,4}})(?::\d{{1,4}})?\u2020[^\u3011\n]{{0,100}}\u3011"
    rf"|<sup>[ \t]*\[?(?P<sup>{_NUMBERS})\]?[ \t]*</sup>"
    rf"|(?P<usup>{_SUPERSCRIPT}{{1,4}}(?:[,\u207b\-]{_SUPERSCRIPT}{{1,4}}){{0,40}})"
    rf"|(?:(?<=[^\W_]{SENTENCE_END})|(?<=[)%\"\u201d]{SENTENCE_END}))"
    rf"(?P<glued>\d{{1,3}}(?:,[ ]?\d{{1,3}}){{0,40}})"
    r"(?=[ \t]*$|\s+(?-i:[^\s\da-z]))"
    # Identifiers and URLs.
    rf"|(?P<doi>\bdoi:[ \t]*{DOI_TEXT.pattern})"
    rf"|(?P<arxiv>\b{ARXIV_TEXT.pattern})"
    rf"|<(?P<aurl>https?://[^\s<>]{{1,4000}})>"
    rf"|(?P<url>{_URL})"
    # Any other inline HTML tag ("<br>", "<em>"): no citation, no words.
    rf"|(?P<tag></?[A-Za-z][A-Za-z0-9]{{0,15}}(?:\s[^<>\n]{{0,500}})?/?>)",
    re.IGNORECASE,
)

# The forms of INLINE_CITATION, each the name of the group that only it fills, in the
# pattern's order.
INLINE_KINDS = (
    *("link", "open", "ahref", "foot", "loc", "nums", "word", "chat", "sup", "usup", "glued"),
    *("doi", "arxiv", "aurl", "url", "tag"),
)

# A superscript digit as an ASCII digit ("¹²" -> "12"), "⁻" as "-".
SUPERSCRIPT_DIGITS = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b", "0123456789-"
)

# --- reference lists ------------------------------------------------------------------------

# The headings a reference list sits under, lower-case.
REFERENCE_HEADINGS = frozenset(
    {"references", "reference list", "sources", "sources cited", "source list", "citations"}
    | {"works cited", "cited works", "literature cited", "bibliography", "notes", "footnotes"}
    | {"endnotes", "sources and references", "references and sources", "key sources"}
)
# A heading's number: "5. References", "IV) Sources".
_HEADING_NUMBER = re.compile(r"^(?:\d{1,3}|[IVXivx]{1,5})[.)]\s+")
_HEADING_DRESS = " \t\n#*_:.>"

# The end of a reference line that says when it was read: ", accessed May 3, 2025",
# "Retrieved 12 March 2024" (matched against whitespace-collapsed text).
ACCESSED = re.compile(
    r"[,.;]?[ \t]*(?:last[ \t]+)?(?:accessed|retrieved|visited)(?:[ \t]+on)?[ \t]+"
    r"[^\n]{0,60}?[,.;]?[ \t]*$",
    re.IGNORECASE,
)


def is_reference_heading(text: str) -> bool:
    """Is ``text`` (a heading, or a paragraph's first line) the title of a reference list?"""
    if len(text) > 80:
        return False
    words = _HEADING_NUMBER.sub("", text.strip(_HEADING_DRESS)).strip(_HEADING_DRESS)
    return " ".join(words.split()).lower() in REFERENCE_HEADINGS


# --- formats --------------------------------------------------------------------------------

# A text that opens with one of these tags (or names a document anywhere) is HTML.
HTML_START = re.compile(
    r"\A\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body|article|section|main|div|p|h[1-6]|ol|ul|table)\b",
    re.IGNORECASE | re.DOTALL,
)
# A Markdown text has a heading, a link, a list item, bold text or a definition line.
MARKDOWN_CUE = re.compile(
    r"^#{1,6}[ \t]|\]\(|^[ \t]*[-*+][ \t]+\S|\*\*\S|^[ \t]*\d{1,3}\.[ \t]+\S"
    r"|^\[\^?[^\]\n]{1,60}\]:",
    re.MULTILINE,
)
