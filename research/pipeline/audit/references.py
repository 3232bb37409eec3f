"""A report's reference lines as citations, and the lookup that resolves its markers.

:func:`parse_entry` reads one reference line in any engine's form (``[1] Title: URL``,
``[1] Title. URL``, ``1. Title - URL``, ``[1] [Title](URL)``, ``[^1]: Smith … doi:10.…``,
``Title, accessed <date>, URL``, an APA line ending in a URL) into a :class:`Citation`
and the problems it has (no link at all, a malformed URL). :class:`Resolver` holds the
list (the first of two references with one label wins) and answers a marker's label, or
an inline link's URL, DOI or arXiv id, with the reference it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from research.pipeline.audit import markup
from research.pipeline.audit.records import Citation, ParseFinding
from research.pipeline.identity import (
    arxiv_id_from_url,
    doi_from_url,
    extract_arxiv_id,
    extract_doi,
    normalize_url,
)
from research.pipeline.language.citations import ACCESSED, INLINE_CITATION, INLINE_KINDS

# A reference line's own label: "[1]", "[1]:", "[^1]:", "[smith2020]", "1.", "1)", "1:",
# after an optional list bullet.
ENTRY_LABEL = re.compile(
    r"^[ \t]*(?:[-*+\u2022][ \t]+)?"
    r"(?:\[(?P<bracket>\^?[^\[\]\s]{1,60})\](?!\()[ \t]*:?|(?P<number>\d{1,4})[.):])[ \t]*"
)
_SEPARATORS = " \t\n:;,.-\u2013\u2014|\"'"


@dataclass(frozen=True)
class Link:
    """A link target read from a report: ``url`` when it is a well-formed http(s) URL."""

    url: str
    doi: str
    arxiv_id: str


def read_target(target: str) -> Link | None:
    """A link target as a URL with its DOI and arXiv id; None when it is no http(s) URL."""
    if not well_formed(target):
        return None
    return Link(target, doi_from_url(target) or "", _arxiv_from_url(target))


def well_formed(url: str) -> bool:
    """An http(s) URL with a host that has a dot (or is localhost) and a valid port."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError:
        return False
    host = parts.hostname or ""
    if parts.scheme.lower() not in ("http", "https") or any(ch.isspace() for ch in url):
        return False
    return bool(host) and ("." in host.strip(".") or host == "localhost")


def _arxiv_from_url(url: str) -> str:
    try:
        return arxiv_id_from_url(url) or ""
    except ValueError:
        return ""


def text_identifiers(text: str) -> tuple[str, str]:
    """The DOI and arXiv id written in ``text`` (not in a URL), each "" when absent."""
    if "://" in text and not any(ch.isspace() for ch in text.strip()):
        return "", ""  # identity reads a lone URL as a URL; this is only text
    try:
        arxiv_id = extract_arxiv_id(text) or ""
    except ValueError:
        arxiv_id = ""
    return extract_doi(text) or "", arxiv_id


def normalize_label(label: str) -> str:
    """A marker's label as references are keyed: "01" -> "1", "Smith2020" -> "smith2020"."""
    label = label.strip()
    if label.isascii() and label.isdigit():
        return str(int(label))
    return label.casefold()


def split_entry_lines(text: str) -> list[str]:
    """A paragraph of a reference list as its entries: a line opens a new entry when it
    starts with a label or when the entry before it already has a link; otherwise it
    continues that entry (a wrapped line)."""
    entries: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        if entries and not ENTRY_LABEL.match(line) and not _has_link(entries[-1]):
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    return entries


def _has_link(text: str) -> bool:
    return "://" in text or "doi:" in text.lower() or "arxiv:" in text.lower()


@dataclass
class _Entry:
    """What one reference line says, gathered while its inline parts are read."""

    url: str = ""
    doi: str = ""
    arxiv_id: str = ""
    title: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)

    def take(self, link: Link) -> None:
        self.url = self.url or link.url
        self.doi = self.doi or link.doi
        self.arxiv_id = self.arxiv_id or link.arxiv_id


def parse_entry(text: str, number: str = "") -> tuple[Citation, list[ParseFinding]]:
    """One reference line as a citation and its problems.

    The label is the line's own (``[1]``, ``1.``, ``[^1]:``), else the list's ``number``,
    else the URL (an inline link to it cites it), else its DOI or arXiv id, else its title.
    """
    match = ENTRY_LABEL.match(text)
    label = ""
    if match:
        label = match.group("bracket") or match.group("number") or ""
        text = text[match.end() :]
    entry = _read_entry(text)
    title = _entry_title("".join(entry.title))
    doi, arxiv_id = text_identifiers(" ".join(entry.title))
    doi, arxiv_id = entry.doi or doi, entry.arxiv_id or arxiv_id
    name = label or number or entry.url or doi or arxiv_id or title
    citation = Citation(name, entry.url, doi, arxiv_id, title)
    findings = [
        ParseFinding("malformed-url", f"reference {name}: {bad!r} is not a web address", name)
        for bad in entry.malformed
    ]
    if not (citation.url or citation.doi or citation.arxiv_id):
        findings.append(without_link(f"reference {name}", name))
    return citation, findings


def without_link(what: str, label: str) -> ParseFinding:
    """The finding for a reference that names nothing to fetch."""
    detail = f"{what} gives no URL, DOI or arXiv id, so it cannot be fetched"
    return ParseFinding("reference-without-link", detail, label)


def _read_entry(text: str) -> _Entry:
    """Walk a reference line's inline parts: links and URLs give the link, the rest the title."""
    entry = _Entry()
    cursor = 0
    for match in INLINE_CITATION.finditer(text):
        entry.title.append(text[cursor : match.start()])
        cursor = match.end()
        kind = inline_kind(match)
        if kind in ("link", "open", "ahref"):
            _entry_link(entry, match)
        elif kind in ("url", "aurl"):
            target = match.group(kind) if kind == "aurl" else trim_url(match.group(kind))
            cursor = match.end() if kind == "aurl" else match.start() + len(target)
            link = read_target(target)
            if link:
                entry.take(link)
            else:
                entry.malformed.append(target)
        elif kind in ("doi", "arxiv"):
            token = trim_url(match.group(kind))
            cursor = match.start() + len(token)
            doi, arxiv_id = text_identifiers(token)
            entry.take(Link("", doi, arxiv_id))
        elif kind != "tag":
            entry.title.append(match.group(0))
    entry.title.append(text[cursor:])
    return entry


def _entry_link(entry: _Entry, match: re.Match[str]) -> None:
    """A link in a reference line: its target is the reference's URL, its text the title
    (unless the text is only the URL again)."""
    words, target = link_parts(match)
    if match.group("bang"):
        return
    link = read_target(target)
    if link:
        entry.take(link)
    elif target and not target.startswith("#"):
        entry.malformed.append(target)
    if words.strip() and words.strip() != target:
        entry.title.append(words)


def link_parts(match: re.Match[str]) -> tuple[str, str]:
    """A link match's words and target (a Markdown link, an unclosed one, or ``<a href>``)."""
    words = match.group("ltext") or match.group("otext") or match.group("atext") or ""
    if match.group("otarget") is not None:  # unclosed: the sentence's full stop is no part
        return words, trim_url(match.group("otarget"))
    target = match.group("ltarget") or match.group("ahref") or ""
    return words, target.strip("<> ")


def _entry_title(text: str) -> str:
    """The title left of a reference line: markup, separators and "accessed <date>" removed."""
    return ACCESSED.sub("", markup.words(text)).strip(_SEPARATORS)


def inline_kind(match: re.Match[str]) -> str:
    """Which form of :data:`INLINE_CITATION` matched: the first of its kinds with a group."""
    return next(kind for kind in INLINE_KINDS if match.group(kind) is not None)


def trim_url(url: str) -> str:
    """A URL read from prose without the punctuation that ends its sentence: trailing
    ``.,;:!?`` and closing brackets that open nowhere in the URL."""
    while url:
        last = url[-1]
        unopened = last == ")" and url.count(")") > url.count("(")
        if last not in ".,;:!?'\"*_" and not unopened:
            break
        url = url[:-1]
    return url


def _url_key(url: str) -> str:
    try:
        return normalize_url(url)
    except ValueError:
        return url


class Resolver:
    """The reference list, looked up by label and by URL, DOI and arXiv id.

    Built from the references in order; of two with one label the first wins, and the
    second is reported as a ``duplicate-reference`` finding.
    """

    def __init__(self, references: list[Citation]) -> None:
        self.by_label: dict[str, Citation] = {}
        self.by_identity: dict[str, Citation] = {}
        self.findings: list[ParseFinding] = []
        for reference in references:
            self._add(reference)

    def _add(self, reference: Citation) -> None:
        key = normalize_label(reference.label)
        if key in self.by_label:
            first = self.by_label[key]
            self.findings.append(
                ParseFinding(
                    "duplicate-reference",
                    f"two references are labelled {reference.label}; the first "
                    f"({first.title or first.url or 'untitled'}) is the one markers cite",
                    reference.label,
                )
            )
            return
        self.by_label[key] = reference
        for identity in self._identities(reference):
            self.by_identity.setdefault(identity, reference)

    @staticmethod
    def _identities(citation: Citation) -> list[str]:
        found = []
        if citation.url:
            found.append("url:" + _url_key(citation.url))
        if citation.doi:
            found.append("doi:" + citation.doi)
        if citation.arxiv_id:
            found.append("arxiv:" + citation.arxiv_id)
        return found

    def label(self, label: str) -> Citation | None:
        """The reference a marker's label names, or None."""
        return self.by_label.get(normalize_label(label))

    def identity(self, citation: Citation) -> Citation:
        """The reference with the same URL, DOI or arXiv id as an inline citation, else the
        inline citation itself."""
        for identity in self._identities(citation):
            if identity in self.by_identity:
                return self.by_identity[identity]
        return citation
