"""One block of a report as sentences with the citations their markers name.

:func:`read_block` finds every inline citation (:data:`INLINE_CITATION`) in a block's text,
resolves it against the report's :class:`Resolver`, and writes the claim text with the
markers, link markup and footnote references taken out. A parenthesized citation
("… rose ([Reuters](https://…)).", "(https://…)") goes with its parentheses; a link in
running text keeps its words. The claim text is split by the project's one splitter,
:func:`split_sentences`, and each marker is given to the sentence it ends: the last one
that starts before it, so "… falls.[3] Next …" cites [3] for "… falls.".

A number glued to a full stop (``… rose.1``), a Unicode superscript and a named
``[label]`` are markers only when the reference list has every label they name; any
other marker that names no reference is a ``dangling-marker`` finding.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace

from research.pipeline.audit import markup
from research.pipeline.audit.records import Citation
from research.pipeline.audit.references import (
    Resolver,
    inline_kind,
    link_parts,
    normalize_label,
    read_target,
    text_identifiers,
    trim_url,
)
from research.pipeline.language.citations import INLINE_CITATION, SUPERSCRIPT_DIGITS
from research.pipeline.language.sentences import SENTENCE_END, split_sentences

MAX_RANGE = 100  # "[1-3]" names 1, 2 and 3; a longer range names its two ends only
_NUMBER = re.compile(r"\d{1,4}")
_RANGE = re.compile(r"(\d{1,4})[ \t]*[\u2013\-][ \t]*(\d{1,4})")
# A link's or superscript's words that are only reference numbers: "1", "[2]", "1, 3".
NUMBER_LIST = re.compile(r"\[?\s*(\d{1,4}(?:\s*[,\u2013\-]\s*\d{1,4}){0,40})\s*\]?")
_SEPARATOR = re.compile(r"[\s,;]*")
_OPEN_PAREN = re.compile(r"\([ \t]*$")
_CLOSE_PAREN = re.compile(r"^[ \t]*\)")
_GROUPABLE = ("link", "open", "ahref", "url", "aurl", "doi", "arxiv")  # INLINE_KINDS


@dataclass
class Marker:
    """A citation marker found in a block: what it cites and what it could not resolve."""

    raw: str  # as written
    start: int  # raw offsets in the block's text
    end: int
    citations: list[Citation] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)  # labels no reference has
    malformed: str = ""  # what is wrong with its link, in plain words ("" when nothing)

    @property
    def resolved(self) -> bool:
        return bool(self.citations) and not self.dangling

    pos: int = 0  # offset into the claim text where the marker sits


@dataclass
class _Token:
    start: int
    end: int
    kind: str
    display: str | None  # the words it leaves in the claim text; None: nothing
    marker: Marker | None


@dataclass
class Sentence:
    """A sentence of one block, before it is numbered in the report."""

    raw: str
    text: str
    markers: list[Marker]


def read_block(text: str, resolver: Resolver) -> list[Sentence]:
    """The sentences of one body block, each with the markers it ends."""
    tokens = _group_parentheses(text, _tokens(text, resolver))
    clean, starts, ends, markers = _clean(text, tokens)
    pieces = _split_at_markers(clean, split_sentences(clean), markers)
    spans = [(a, b, claim) for a, b in pieces if (claim := markup.words(clean[a:b]))]
    if not spans:
        return []
    owners: list[list[Marker]] = [[] for _ in spans]
    first_starts = [a for a, _, _ in spans]
    for marker in markers:
        owners[max(bisect.bisect_left(first_starts, marker.pos) - 1, 0)].append(marker)
    sentences = []
    for (a, b, words), own in zip(spans, owners, strict=True):
        raw_start = min([starts[a], *(m.start for m in own)])
        raw_end = max([ends[b - 1], *(m.end for m in own)])
        sentences.append(Sentence(text[raw_start:raw_end], words, own))
    return sentences


_END_AFTER = re.compile(r"\s*" + SENTENCE_END + r"[\"'\u201d\u2019)\]]*(?=\s)")


def _split_at_markers(
    clean: str, spans: list[tuple[int, int]], markers: list[Marker]
) -> list[tuple[int, int]]:
    """``spans`` also cut where a citation marker sits at a sentence's end ("… falls [3].
    mcm5s2U …", "… falls.[3] β-sheet …"): the splitter wants a capital letter or a digit
    after a full stop, and a sentence an engine cites ends there whatever comes next."""
    cuts: set[int] = set()
    for marker in markers:
        p = marker.pos
        after = _END_AFTER.match(clean, p)
        if after:
            cuts.add(after.end())
        elif 0 < p < len(clean) and clean[p - 1] in ".!?" and clean[p].isspace():
            cuts.add(p)
    out: list[tuple[int, int]] = []
    for a, b in spans:
        start = a
        for cut in sorted(c for c in cuts if a < c < b):
            if clean[start:cut].strip() and clean[cut:b].strip():
                out.append((start, cut))
                start = cut
        out.append((start, b))
    trimmed = []
    for a, b in out:
        while a < b and clean[a].isspace():
            a += 1
        trimmed.append((a, b))
    return trimmed


def plain_text(text: str) -> str:
    """A heading's or title's words: its markers and markup removed, nothing resolved."""
    tokens = _group_parentheses(text, _tokens(text, Resolver([])))
    return markup.words(_clean(text, tokens)[0])


# --- tokens --------------------------------------------------------------------------------


def _tokens(text: str, resolver: Resolver) -> list[_Token]:
    tokens = []
    for match in INLINE_CITATION.finditer(text):
        token = _token(match, resolver)
        if token is not None:
            tokens.append(token)
    return tokens


def _token(match: re.Match[str], resolver: Resolver) -> _Token | None:
    """What one inline match is: a marker, a link, a tag to drop, or (None) plain text."""
    kind = inline_kind(match)
    if kind in ("link", "open", "ahref"):
        return _link_token(match, kind, resolver)
    if kind in ("url", "aurl", "doi", "arxiv"):
        return _identifier_token(match, kind, resolver)
    if kind == "tag":
        return _Token(match.start(), match.end(), kind, None, None)
    return _label_token(match, kind, resolver)


def _label_token(match: re.Match[str], kind: str, resolver: Resolver) -> _Token | None:
    """A marker that names references by label: numbers, footnotes, locators, names."""
    page = ""
    if kind == "foot":
        labels = ["^" + match.group(kind)]
    elif kind == "loc":
        labels, page = [match.group("loc")], match.group("page")
    elif kind == "word":
        labels = [match.group(kind)]
    else:
        labels = _numbers(match.group(kind).translate(SUPERSCRIPT_DIGITS))
    found = [resolver.label(label) for label in labels]
    named = kind == "loc" and not normalize_label(labels[0]).isdigit()
    if None in found and (kind in ("usup", "glued", "word") or named):
        return None  # only a marker when it names references the report has
    marker = _marker(match)
    for label, citation in zip(labels, found, strict=True):
        if citation is None:
            marker.dangling.append(label)
        else:
            marker.citations.append(replace(citation, page=page) if page else citation)
    return _Token(match.start(), match.end(), kind, None, marker)


def _link_token(match: re.Match[str], kind: str, resolver: Resolver) -> _Token:
    """A Markdown or HTML link: an image is dropped, an in-page link to a number is a
    numbered marker, a web link cites its URL and keeps its words in the claim."""
    words, target = link_parts(match)
    end = match.end()
    if kind == "open":
        end = match.start("otarget") + len(target)
    if match.group("bang") is not None:
        return _Token(match.start(), end, kind, None, None)
    if target.startswith("#") or not target:
        numbers = NUMBER_LIST.fullmatch(words.strip())
        if numbers and target:
            marker = _marker(match, end)
            for label in _numbers(numbers.group(1)):
                citation = resolver.label(label)
                if citation is None:
                    marker.dangling.append(label)
                else:
                    marker.citations.append(citation)
            return _Token(match.start(), end, kind, None, marker)
        return _Token(match.start(), end, kind, words, None)
    marker = _marker(match, end)
    link = read_target(target)
    if link is None:
        marker.malformed = f"the link target {target!r} is not a web address"
    else:
        title = markup.words(words) if words.strip() != target else ""
        citation = Citation(target, link.url, link.doi, link.arxiv_id, title)
        marker.citations.append(resolver.identity(citation))
    if kind == "open":
        marker.malformed = f"the link to {target} is not closed with ')'"
    shown = words.strip() != target and not NUMBER_LIST.fullmatch(words.strip())
    display = words if shown else None
    return _Token(match.start(), end, kind, display, marker)


def _identifier_token(match: re.Match[str], kind: str, resolver: Resolver) -> _Token:
    """A bare URL, an ``<https://…>`` link, a ``doi:…`` or an ``arXiv:…`` in the prose."""
    if kind == "aurl":
        written, end = match.group(kind), match.end()
    else:
        written = trim_url(match.group(0))
        end = match.start() + len(written)
    marker = _marker(match, end)
    if kind in ("url", "aurl"):
        link = read_target(written)
        if link is None:
            marker.malformed = f"{written!r} is not a well-formed web address"
        else:
            citation = Citation(written, link.url, link.doi, link.arxiv_id)
            marker.citations.append(resolver.identity(citation))
    else:
        doi, arxiv_id = text_identifiers(written)
        if doi or arxiv_id:
            marker.citations.append(resolver.identity(Citation(written, "", doi, arxiv_id)))
    return _Token(match.start(), end, kind, None, marker)


def _marker(match: re.Match[str], end: int | None = None) -> Marker:
    end = match.end() if end is None else end
    return Marker(match.string[match.start() : end], match.start(), end)


def _numbers(written: str) -> list[str]:
    """The labels a numbered marker names: "1, 3" -> 1, 3; "2-4" -> 2, 3, 4."""
    labels: list[str] = []
    for part in re.split(r"\s*,\s*", written.strip()):
        span = _RANGE.fullmatch(part)
        if span:
            low, high = int(span.group(1)), int(span.group(2))
            names = range(low, high + 1) if 0 <= high - low <= MAX_RANGE else (low, high)
            labels.extend(str(n) for n in names)
        else:
            labels.extend(_NUMBER.findall(part))
    return list(dict.fromkeys(labels))


# --- parentheses and the claim text --------------------------------------------------------


def _group_parentheses(text: str, tokens: list[_Token]) -> list[_Token]:
    """Citations that fill a pair of parentheses ("([A](u), [B](v))", "(https://…)") go with
    the parentheses and the separators between them, and leave no words."""
    index = 0
    while index < len(tokens):
        last = index
        while (
            tokens[last].kind in _GROUPABLE
            and last + 1 < len(tokens)
            and tokens[last + 1].kind in _GROUPABLE
            and _SEPARATOR.fullmatch(text, tokens[last].end, tokens[last + 1].start)
        ):
            last += 1
        if tokens[index].kind in _GROUPABLE:
            _wrap(text, tokens, index, last)
        index = last + 1
    return tokens


def _wrap(text: str, tokens: list[_Token], first: int, last: int) -> None:
    before = tokens[first - 1].end if first else 0
    after = tokens[last + 1].start if last + 1 < len(tokens) else len(text)
    opening = _OPEN_PAREN.search(text, before, tokens[first].start)
    closing = _CLOSE_PAREN.match(text[tokens[last].end : after])
    if not opening or not (closing or tokens[last].kind == "open"):
        return  # an unclosed link in "(" closes nothing: the parenthesis goes with it
    tokens[first].start = opening.start()
    tokens[last].end += closing.end() if closing else 0
    for token, following in zip(tokens[first:last], tokens[first + 1 : last + 1], strict=True):
        token.end = following.start
    for token in tokens[first : last + 1]:
        token.display = None


def _clean(text: str, tokens: list[_Token]) -> tuple[str, list[int], list[int], list[Marker]]:
    """The claim text with markers taken out, where each of its characters starts and ends
    in ``text``, and the markers with their place in it."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    markers: list[Marker] = []
    size = cursor = 0
    for token in tokens:
        if token.start < cursor:
            continue  # swallowed by a parenthesized group before it
        parts.append(text[cursor : token.start])
        starts.extend(range(cursor, token.start))
        ends.extend(range(cursor + 1, token.start + 1))
        size += token.start - cursor
        if token.display:
            parts.append(token.display)
            starts.extend([token.start] * len(token.display))
            ends.extend([token.end] * len(token.display))
            size += len(token.display)
        if token.marker is not None:
            token.marker.pos = size
            markers.append(token.marker)
        cursor = token.end
    parts.append(text[cursor:])
    starts.extend(range(cursor, len(text)))
    ends.extend(range(cursor + 1, len(text) + 1))
    return "".join(parts), starts, ends, markers
