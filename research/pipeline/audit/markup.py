"""The words of a piece of Markdown: what a claim or a reference title reads as.

:func:`words` removes bold, italic and code marks (never the ``*`` of ``a*b`` or the ``_``
of ``snake_case``), backslash escapes and empty parentheses, collapses whitespace and
drops a space left before punctuation (where a marker stood: "falls [3]." -> "falls.").
"""

from __future__ import annotations

import re

_MARKS = re.compile(r"\*\*|__|`")
_EMPHASIS = re.compile(r"(?<![\w*\\])[*_](?=[^\s*_])|(?<=[^\s*_\\])[*_](?![\w*])")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_EMPTY_PARENS = re.compile(r"\(\s*\)")
_SPACE_BEFORE_PUNCTUATION = re.compile(r" (?=[.,;:!?])")


def words(text: str) -> str:
    """``text`` without Markdown's emphasis marks and escapes, whitespace collapsed."""
    text = _ESCAPE.sub(r"\1", _EMPHASIS.sub("", _MARKS.sub("", text)))
    text = " ".join(_EMPTY_PARENS.sub(" ", text).split())
    return _SPACE_BEFORE_PUNCTUATION.sub("", text)
