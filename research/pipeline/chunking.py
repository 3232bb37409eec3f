"""Structure-aware chunking: blocks of an extracted text -> section and chunk passages.

``chunk_document(text, blocks, cfg)`` is pure. It walks the blocks (see
``research.pipeline.extract.Block``), keeps a heading stack for the section path, and
emits for every section one *section* passage (the parent, for context) and *chunk*
passages of at most ``cfg.max_chars`` characters made of whole sentences, list items and
table rows, overlapping by ``cfg.overlap_sentences`` sentences. A table stays with its
caption. Every passage's text is exactly ``text[start:end]``; sentence offsets are
absolute offsets into ``text`` as well.

Bounds: with ``max_passages`` it stops as soon as the document is known to make more
passages than that (it returns ``max_passages + 1`` drafts, the rest never made), and past
``deadline`` (a ``time.monotonic()`` value) it raises ``TimeoutError``; both are checked
block by block and section by section, so a refusal costs at most one block's work more.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from research.pipeline.extract import Block
from research.pipeline.language.sentences import split_sentences, trim_span

PassageKindName = Literal["section", "chunk"]


@dataclass(frozen=True)
class ChunkConfig:
    max_chars: int = 1000  # chunk bound; ~250 MiniLM word pieces with the title prefix
    overlap_sentences: int = 1
    max_section_chars: int = 6000  # a longer section is split into several parents


@dataclass(frozen=True)
class PassageDraft:
    """One passage to store: ``text[start:end]``; ``parent`` indexes a section draft."""

    kind: PassageKindName
    ordinal: int
    start: int
    end: int
    section_path: str
    sentences: tuple[tuple[int, int], ...] = ()
    parent: int | None = None
    page: int | None = None


@dataclass
class _Unit:
    """The smallest piece packed into chunks: a sentence, list item or table row(s)."""

    start: int
    end: int
    page: int | None
    sentence: bool
    glue: bool = False  # a caption: keep the next unit (its table) in the same chunk

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class _Section:
    path: str
    start: int
    end: int = 0
    units: list[_Unit] = field(default_factory=list)


def _hard_split(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut an over-long span at whitespace so that no piece exceeds ``limit``.

    Every piece is trimmed of outer whitespace (a cut between two spaces leaves none at
    either side), and each character is looked at a bounded number of times.
    """
    pieces: list[tuple[int, int]] = []
    while end - start > limit:
        cut = text.rfind(" ", start + limit // 2, start + limit)
        cut = cut if cut > start else start + limit
        if piece := trim_span(text, start, cut):
            pieces.append(piece)
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if piece := trim_span(text, start, end):
        pieces.append(piece)
    return pieces


def _units(text: str, block: Block, cfg: ChunkConfig) -> list[_Unit]:
    if block.kind == "table":  # one unit per row; a row longer than a chunk is cut too
        lines = _line_spans(text, block.start, block.end)
        return [
            _Unit(*piece, block.page, False)
            for s, e in lines
            for piece in _hard_split(text, s, e, cfg.max_chars)
        ]
    spans = split_sentences(text, block.start, block.end)
    if block.kind == "code":
        spans = [(block.start, block.end)]
    units: list[_Unit] = []
    for s, e in spans:
        for piece in _hard_split(text, s, e, cfg.max_chars):
            units.append(_Unit(*piece, block.page, block.kind != "code", block.kind == "caption"))
    return units


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, cursor = [], start
    for line in text[start:end].split("\n"):
        span = trim_span(text, cursor, cursor + len(line))
        if span:
            spans.append(span)
        cursor += len(line) + 1
    return spans


@dataclass(frozen=True)
class _Limits:
    max_passages: int | None = None
    deadline: float | None = None

    def over(self, passages: int) -> bool:
        return self.max_passages is not None and passages > self.max_passages

    def check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TimeoutError("chunking passed its deadline")


def _sections(
    text: str, blocks: Sequence[Block], cfg: ChunkConfig, limits: _Limits
) -> list[_Section]:
    """Group blocks under their headings; a section starts at its heading.

    Stops early once the sections alone make more than ``limits.max_passages`` passages
    (each section is one passage and has at least one chunk).
    """
    stack: list[tuple[int, str]] = []
    sections: list[_Section] = []
    current = _Section("", 0)
    for block in blocks:
        limits.check_time()
        if block.kind in {"heading", "title"}:
            if current.units:
                sections += _split_section(current, cfg)
                if limits.over(2 * len(sections)):
                    return sections
            if block.kind == "heading":
                stack = [(lvl, name) for lvl, name in stack if lvl < block.level]
                stack.append((block.level, " ".join(text[block.start : block.end].split())))
            current = _Section(" > ".join(name for _, name in stack), block.start)
            continue
        if not current.units and current.start > block.start:
            current.start = block.start
        current.units.extend(_units(text, block, cfg))
        current.end = block.end
    if current.units:
        sections += _split_section(current, cfg)
    return sections


def _split_section(section: _Section, cfg: ChunkConfig) -> list[_Section]:
    if section.end - section.start <= cfg.max_section_chars:
        return [section]
    parts: list[_Section] = []
    for units in _pack(section.units, cfg.max_section_chars, 0):
        start = section.start if not parts else units[0].start
        parts.append(_Section(section.path, start, units[-1].end, units))
    return parts


def _pack(units: list[_Unit], limit: int, overlap: int) -> list[list[_Unit]]:
    """Greedy, balanced packing of units into groups spanning at most ``limit`` chars."""
    if not units:
        return []
    total = units[-1].end - units[0].start
    target = total / max(1, math.ceil(total / limit))
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    for unit in units:
        span = unit.end - current[0].start if current else unit.size
        full = (
            bool(current) and not current[-1].glue and current[-1].end - current[0].start >= target
        )
        new_page = bool(current) and unit.page != current[-1].page  # a chunk cites one page
        if current and (span > limit or full or new_page):
            groups.append(current)
            carry = (
                current[-overlap:] if overlap and len(current) > overlap and not new_page else []
            )
            carry = [u for u in carry if u.sentence]
            current = carry if unit.end - (carry or [unit])[0].start <= limit else []
        current.append(unit)
    groups.append(current)
    return groups


def chunk_document(
    text: str,
    blocks: Sequence[Block],
    cfg: ChunkConfig | None = None,
    *,
    max_passages: int | None = None,
    deadline: float | None = None,
) -> list[PassageDraft]:
    """Section passages first (in order), then each section's chunks pointing to it.

    More than ``max_passages`` passages: only the first ``max_passages + 1`` are returned
    (the caller refuses the document). Past ``deadline`` (``time.monotonic()``):
    ``TimeoutError``.
    """
    cfg = cfg or ChunkConfig()
    limits = _Limits(max_passages, deadline)
    sections = _sections(text, blocks, cfg, limits)
    drafts: list[PassageDraft] = []
    for index, section in enumerate(sections):
        sentences = tuple((u.start, u.end) for u in section.units)
        page = section.units[0].page
        drafts.append(
            PassageDraft(
                "section", index, section.start, section.end, section.path, sentences, None, page
            )
        )
    if max_passages is not None and len(drafts) > max_passages:  # the sections alone
        return drafts[: max_passages + 1]
    for index, section in enumerate(sections):
        limits.check_time()
        for group in _pack(section.units, cfg.max_chars, cfg.overlap_sentences):
            drafts.append(
                PassageDraft(
                    "chunk",
                    len(drafts),
                    group[0].start,
                    group[-1].end,
                    section.path,
                    tuple((u.start, u.end) for u in group),
                    index,
                    group[0].page,
                )
            )
            if limits.over(len(drafts)):
                return drafts
    return drafts
