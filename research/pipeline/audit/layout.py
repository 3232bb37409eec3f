"""A report's layout: its body blocks and its reference lines, before anything is resolved.

:class:`Collector` is fed headings and blocks in document order by each format's reader and
sorts them: a heading such as "References", "Sources" or "Works cited" (or a paragraph line
that says only that, like "Sources:") opens the reference list, which runs to the next
heading of its level or above; what it holds are reference lines, not blocks. Readers:

- ``markdowndoc.read_markdown``: CommonMark (with tables) by markdown-it-py. Headings,
  paragraphs, list items (an ordered list's number is kept for reference lines), block
  quotes and table cells; code is skipped; raw HTML blocks are read by
  :mod:`research.pipeline.audit.htmldoc`.
- :func:`read_text`: paragraphs split on blank lines; a paragraph whose lines all start
  with a bullet or a number is a list; a short first line without a full stop is the title.

In both, a definition line (``[1]: https://…``, ``[^1]: Smith … doi:10.…``, with indented
continuation lines) is a reference line wherever it stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research.pipeline.audit.references import split_entry_lines
from research.pipeline.language.citations import is_reference_heading

# A definition line: "[1]: …", "[^note]: …" (at most three spaces in, as CommonMark allows).
_DEFINITION = re.compile(r"^ {0,3}\[\^?[^\[\]\s]{1,60}\]:")
_CONTINUATION = re.compile(r"^(?: {2,}|\t)\S")
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^[ \t]*(?:[-*+\u2022]|(?P<number>\d{1,4})[.)])[ \t]+(?=\S)")
_TITLE_END = ".!?:;,"
MAX_TITLE_CHARS = 120
OUT_OF_LIST = 7  # a reference list opened by a paragraph line ends at any heading


@dataclass(frozen=True)
class RawBlock:
    kind: str  # "heading" | "paragraph" | "list-item" | "quote"
    text: str
    level: int = 0


@dataclass(frozen=True)
class RawEntry:
    """A reference line as written, and the number its list gives it."""

    text: str
    number: str
    order: tuple[int, int]  # (source line, arrival): the reference list's order


@dataclass
class Layout:
    blocks: list[RawBlock] = field(default_factory=list)
    entries: list[RawEntry] = field(default_factory=list)
    title: str = ""  # a title the document declares (HTML <title>); else its first heading


class Collector:
    """Sorts a reader's headings and blocks into body blocks and reference lines."""

    def __init__(self) -> None:
        self.layout = Layout()
        self.references_level: int | None = None
        self.arrivals = 0

    @property
    def in_references(self) -> bool:
        return self.references_level is not None

    def heading(self, text: str, level: int) -> None:
        """A heading closes a reference list of its level or deeper; a reference heading
        opens one; headings inside a reference list are no blocks."""
        if self.references_level is not None and level <= self.references_level:
            self.references_level = None
        if is_reference_heading(" ".join(text.split())):
            self.references_level = level
        elif not self.in_references and text.strip():
            self.layout.blocks.append(RawBlock("heading", text, level))

    def block(self, text: str, kind: str, line: int = 0, number: str = "") -> None:
        """A paragraph, list item, quote or table cell (``kind`` "cell", kept as a
        paragraph): body text, or reference lines inside a reference list.

        A paragraph line that is a reference heading ("Sources:") opens a reference list
        there: the lines before it are body, the lines after it references.
        """
        if kind == "cell":
            kind = "paragraph"
        elif not self.in_references and kind == "paragraph":
            lines = text.split("\n")
            for index, words in enumerate(lines):
                if is_reference_heading(words):
                    self.block("\n".join(lines[:index]).strip(), kind, line)
                    self.references_level = OUT_OF_LIST
                    text, line, number = "\n".join(lines[index + 1 :]), line + index + 1, ""
                    break
        if self.in_references:
            self.entries(text, line, number)
        elif text.strip():
            self.layout.blocks.append(RawBlock(kind, text))

    def entries(self, text: str, line: int, number: str = "") -> None:
        for index, entry in enumerate(split_entry_lines(text)):
            self.entry(entry, line + index, number if index == 0 else "")

    def entry(self, text: str, line: int, number: str = "") -> None:
        self.arrivals += 1
        self.layout.entries.append(RawEntry(text, number, (line, self.arrivals)))


def take_definitions(text: str, collector: Collector) -> str:
    """Give every definition line (and its indented continuation) to ``collector`` as a
    reference line; return ``text`` with those lines blanked, its line numbers kept."""
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        if not _DEFINITION.match(lines[index]):
            index += 1
            continue
        first = index
        index += 1
        while index < len(lines) and _CONTINUATION.match(lines[index]):
            index += 1
        collector.entry(" ".join(" ".join(lines[first:index]).split()), first)
        lines[first:index] = [""] * (index - first)
    return "\n".join(lines)


# --- plain text ------------------------------------------------------------------------------


def read_text(text: str) -> Layout:
    """Plain text: paragraphs on blank lines, lists of bulleted or numbered lines, and a
    short first line without a full stop as the title."""
    collector = Collector()
    source = take_definitions(text, collector)
    paragraphs = _paragraphs(source)
    if len(paragraphs) > 1 and _is_title(paragraphs[0][1]):
        collector.heading(paragraphs[0][1].strip(), 1)
        paragraphs = paragraphs[1:]
    for line, paragraph in paragraphs:
        lines = [words for words in paragraph.split("\n") if words.strip()]
        bullets = [_BULLET.match(words) for words in lines]
        if not all(bullets):
            collector.block("\n".join(words.strip() for words in lines), "paragraph", line)
            continue
        for offset, (words, bullet) in enumerate(zip(lines, bullets, strict=True)):
            assert bullet is not None
            item = words[bullet.end() :].strip()
            collector.block(item, "list-item", line + offset, bullet.group("number") or "")
    return collector.layout


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """The non-blank paragraphs of ``text`` with the line each starts on."""
    found = []
    cursor = line = 0
    for piece in [*_BLANK_LINES.finditer(text), None]:
        end = piece.start() if piece else len(text)
        chunk = text[cursor:end]
        if chunk.strip():
            leading = len(chunk) - len(chunk.lstrip("\n"))
            found.append((line + leading, chunk.strip("\n")))
        line += chunk.count("\n") + (piece.group().count("\n") if piece else 0)
        cursor = piece.end() if piece else len(text)
    return found


def _is_title(paragraph: str) -> bool:
    words = paragraph.strip()
    return (
        "\n" not in words
        and len(words) <= MAX_TITLE_CHARS
        and not words.endswith(tuple(_TITLE_END))
        and not is_reference_heading(words)
        and not _BULLET.match(words)
    )
