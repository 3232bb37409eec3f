"""Finding withheld claim wording in text, whatever its surface form.

A withheld text (a rejected or unreviewed claim's wording, a candidate set aside at
mining, a pre-narrowing text) must not reach an export in *any* variant: another case,
other punctuation or spacing, a section-label prefix ("CONTEXT", "Background:") added or
removed, or cut short ("… reduced the incidence of hip…"). So matching is on word
tokens, not characters:

- text is split into word tokens (letters and digits; NFKC, case-folded), so case,
  punctuation, markup escapes and whitespace do not count;
- a withheld text matches wherever a run of at least ``MIN_RUN`` of its consecutive
  tokens occurs (which covers truncation and added or missing label prefixes); a withheld
  text shorter than that matches only whole, with or without its label prefix;
- a window of tokens that also occurs in an *allowed* string (an approved claim's text,
  a quote it cites, a source title, the plan's own words) is not a leak: those words are
  the report's own, and a rejected claim that repeats them cannot be told apart.

``WithheldMatcher.redact`` replaces every matching span of a free text (reviewer notes,
verifier rationales) when the document is built; ``first_leak`` is the last scan of an
export's text before it leaves the server. Pure: no ORM, no settings.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

REDACTED = "[withheld claim text]"
# Consecutive words of a withheld text that count as its wording (truncated or not).
MIN_RUN = 6

_TOKEN = re.compile(r"[^\W_]+")
# "Background:" / "Main outcome measures:" at the start of a text.
_COLON_LABEL = re.compile(r"^\s*[A-Za-z][A-Za-z ,&/-]{2,40}:\s")


@dataclass(frozen=True)
class Token:
    norm: str
    start: int
    end: int
    upper: bool  # all capitals in the original ("CONTEXT")


def tokenize(text: str) -> list[Token]:
    found = []
    for m in _TOKEN.finditer(text):
        raw = m.group()
        norm = unicodedata.normalize("NFKC", raw).casefold()
        found.append(Token(norm, m.start(), m.end(), raw.isupper() and raw.isalpha()))
    return found


def norm_tokens(text: str) -> tuple[str, ...]:
    return tuple(t.norm for t in tokenize(text))


def strip_label(text: str) -> tuple[str, ...]:
    """The tokens of ``text`` without a leading section label ("CONTEXT", "Methods:")."""
    colon = _COLON_LABEL.match(text)
    if colon:
        return norm_tokens(text[colon.end() :])
    tokens = tokenize(text)
    n = 0
    while n < len(tokens) and tokens[n].upper:
        n += 1
    # A label is a word of four capitals or more ("CONTEXT", "DESIGN, SETTING, AND …");
    # a leading acronym ("HIV infection …") is part of the claim.
    if n and len(tokens[0].norm) >= 4 and n < len(tokens):
        return tuple(t.norm for t in tokens[n:])
    return tuple(t.norm for t in tokens)


def _grams(tokens: tuple[str, ...], n: int) -> Iterable[tuple[str, ...]]:
    return (tokens[i : i + n] for i in range(len(tokens) - n + 1))


class WithheldMatcher:
    """Matches every variant of a set of withheld texts (see the module docstring)."""

    def __init__(self, withheld: Iterable[str], allowed: Iterable[str] = ()) -> None:
        self.texts: list[str] = []
        self._runs: dict[tuple[str, ...], int] = {}  # MIN_RUN-gram -> withheld index
        self._whole: dict[int, dict[tuple[str, ...], int]] = {}  # short texts by length
        for text in withheld:
            self._add(text)
        lengths = {MIN_RUN, *self._whole}
        self._allowed: set[tuple[str, ...]] = set()
        for text in allowed:
            tokens = norm_tokens(text)
            for n in lengths:
                self._allowed.update(_grams(tokens, n))

    def _add(self, text: str) -> None:
        index = len(self.texts)
        self.texts.append(text)
        for tokens in {norm_tokens(text), strip_label(text)}:
            if len(tokens) >= MIN_RUN:
                for gram in _grams(tokens, MIN_RUN):
                    self._runs.setdefault(gram, index)
            elif tokens:
                self._whole.setdefault(len(tokens), {}).setdefault(tokens, index)

    def _hits(self, tokens: list[Token]) -> Iterable[tuple[int, int, int]]:
        """(first token, token count, withheld index) of every matching window."""
        norms = tuple(t.norm for t in tokens)
        for i in range(len(norms) - MIN_RUN + 1):
            index = self._runs.get(norms[i : i + MIN_RUN])
            if index is not None:
                yield i, MIN_RUN, index
        for n, table in self._whole.items():
            for i in range(len(norms) - n + 1):
                index = table.get(norms[i : i + n])
                if index is not None:
                    yield i, n, index

    def first_leak(self, text: str) -> str | None:
        """The first withheld text whose wording ``text`` shows outside allowed words."""
        tokens = tokenize(text)
        norms = tuple(t.norm for t in tokens)
        for i, n, index in self._hits(tokens):
            if norms[i : i + n] not in self._allowed:
                return self.texts[index]
        return None

    def redact(self, text: str) -> str:
        """``text`` with every span that matches a withheld text replaced by REDACTED."""
        tokens = tokenize(text)
        spans = sorted((tokens[i].start, tokens[i + n - 1].end) for i, n, _ in self._hits(tokens))
        if not spans:
            return text
        merged: list[list[int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        parts, last = [], 0
        for start, end in merged:
            parts += [text[last:start], REDACTED]
            last = end
        parts.append(text[last:])
        return "".join(parts)
