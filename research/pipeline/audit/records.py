"""The records of a parsed report: its blocks, sentences, references and citation problems.

A :class:`ParsedReport` is what :func:`research.pipeline.audit.parse.parse_report` makes of
another engine's report. It is stored on the plan as JSON (:meth:`ParsedReport.to_json`,
read back losslessly by :meth:`ParsedReport.from_json`). Problems with the report's
citations are :class:`ParseFinding` rows for the audit ledger; only input that is no
report at all raises :class:`ReportParseError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_REPORT_CHARS = 500_000

# What a ParseFinding can say (an uncited sentence is no finding: its citations are empty).
FINDING_KINDS = (
    "dangling-marker",  # "[7]" and the reference list has no 7
    "reference-without-link",  # a reference with no URL, DOI or arXiv id: nothing to fetch
    "duplicate-reference",  # two references with one label: the first wins
    "unused-reference",  # a reference no sentence cites
    "malformed-url",  # a link target that is not a well-formed http(s) URL, or is not closed
)


class ReportParseError(ValueError):
    """The input is not a report at all (empty, binary, too long, JSON of another shape).

    The message says, in plain words, what to do instead.
    """


@dataclass(frozen=True)
class Citation:
    """One source a report cites, as resolved from a marker, a link or a reference line."""

    label: str  # the marker's name: "1", "^2", "smith2020", or the URL of an inline link
    url: str = ""  # as written (http/https only)
    doi: str = ""  # normalized (research.pipeline.identity.normalize_doi)
    arxiv_id: str = ""  # without its version (research.pipeline.identity)
    title: str = ""  # the reference's title or text as written, markup removed
    page: str = ""  # a locator's page ("[smith2020:12]" -> "12")

    def to_json(self) -> dict[str, str]:
        return {
            "label": self.label,
            "url": self.url,
            "doi": self.doi,
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "page": self.page,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Citation:
        return cls(
            label=str(data["label"]),
            url=str(data.get("url", "")),
            doi=str(data.get("doi", "")),
            arxiv_id=str(data.get("arxiv_id", "")),
            title=str(data.get("title", "")),
            page=str(data.get("page", "")),
        )


@dataclass(frozen=True)
class ParseFinding:
    """A problem with the report's citations, for a reviewer; never raised."""

    kind: str  # one of FINDING_KINDS
    detail: str  # plain words
    label: str = ""  # the reference or marker it is about
    sentence: int | None = None  # index into ParsedReport.sentences

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "detail": self.detail,
            "label": self.label,
            "sentence": self.sentence,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParseFinding:
        sentence = data.get("sentence")
        return cls(
            kind=str(data["kind"]),
            detail=str(data["detail"]),
            label=str(data.get("label", "")),
            sentence=None if sentence is None else int(sentence),
        )


@dataclass(frozen=True)
class ReportSentence:
    """One sentence of the report's body and the sources it cites."""

    index: int
    block: int  # index into ParsedReport.blocks
    raw: str  # exactly as written in the block's text, markers included
    text: str  # the claim: markers, link markup and footnote refs removed, spaces collapsed
    citations: tuple[Citation, ...]  # resolved, in marker order, de-duplicated
    markers: tuple[str, ...]  # every marker as written, resolved or not
    unresolved: tuple[str, ...]  # the markers (of ``markers``) that did not resolve

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "block": self.block,
            "raw": self.raw,
            "text": self.text,
            "citations": [c.to_json() for c in self.citations],
            "markers": list(self.markers),
            "unresolved": list(self.unresolved),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReportSentence:
        return cls(
            index=int(data["index"]),
            block=int(data["block"]),
            raw=str(data["raw"]),
            text=str(data["text"]),
            citations=tuple(Citation.from_json(c) for c in data.get("citations", ())),
            markers=tuple(str(m) for m in data.get("markers", ())),
            unresolved=tuple(str(m) for m in data.get("unresolved", ())),
        )


@dataclass(frozen=True)
class ReportBlock:
    """A heading, paragraph, list item or quote of the report's body.

    ``text`` is the block as written: Markdown keeps its inline markup and markers; an
    HTML block is its text with links written as ``[text](href)`` and superscript numbers
    as ``[n]``.
    """

    kind: str  # "heading" | "paragraph" | "list-item" | "quote"
    text: str
    level: int = 0  # heading level (1 = top); 0 for the others
    sentences: tuple[int, ...] = ()  # indexes into ParsedReport.sentences; none for headings

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "level": self.level,
            "sentences": list(self.sentences),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReportBlock:
        return cls(
            kind=str(data["kind"]),
            text=str(data["text"]),
            level=int(data.get("level", 0)),
            sentences=tuple(int(i) for i in data.get("sentences", ())),
        )


@dataclass(frozen=True)
class ParsedReport:
    """A report taken apart: body blocks and sentences, the reference list, findings."""

    format: str  # "markdown" | "html" | "text" | "json"
    title: str
    blocks: tuple[ReportBlock, ...]  # the body only: the reference list is no block
    sentences: tuple[ReportSentence, ...]
    references: tuple[Citation, ...]  # the reference list as parsed, in order
    findings: tuple[ParseFinding, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "title": self.title,
            "blocks": [b.to_json() for b in self.blocks],
            "sentences": [s.to_json() for s in self.sentences],
            "references": [r.to_json() for r in self.references],
            "findings": [f.to_json() for f in self.findings],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParsedReport:
        return cls(
            format=str(data["format"]),
            title=str(data.get("title", "")),
            blocks=tuple(ReportBlock.from_json(b) for b in data.get("blocks", ())),
            sentences=tuple(ReportSentence.from_json(s) for s in data.get("sentences", ())),
            references=tuple(Citation.from_json(r) for r in data.get("references", ())),
            findings=tuple(ParseFinding.from_json(f) for f in data.get("findings", ())),
        )
