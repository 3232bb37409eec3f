"""BM25 text analysis and scoring math, shared by the index writer and the query path.

The analyzer is the one measured in DESIGN.md (bm25s defaults: lowercase, ``\\w\\w+``
tokens, Lucene's English stop words, Snowball English stemmer), plus one addition for
technical text: an identifier such as ``TP53-R175H`` or ``v2.13.1`` is also kept whole,
so an exact identifier outranks documents that merely share its parts.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from research.pipeline.language.lexicon import BM25_STOPWORDS, stem_words

WORD = re.compile(r"(?u)\b\w\w+\b")
# Word characters joined by - . / (at least one digit somewhere): gene variants, versions.
IDENTIFIER = re.compile(r"(?u)\b\w+(?:[-./]\w+)+\b")
MIXED = re.compile(r"(?=\w*[^\W\d_])(?=\w*\d)\w+")
MAX_TOKEN_CHARS = 64


@dataclass(frozen=True)
class BM25Params:
    """Lucene BM25 (the bm25s default): idf = ln(1 + (N - df + .5) / (df + .5))."""

    k1: float = 1.5
    b: float = 0.75


def _identifiers(text: str) -> list[str]:
    found = []
    for match in IDENTIFIER.finditer(text):
        token = match.group(0).lower().strip("-./")
        if any(ch.isdigit() for ch in token) and len(token) <= MAX_TOKEN_CHARS:
            found.append(token)
    return found


def analyze(text: str) -> list[str]:
    """Text to index terms (with repeats): stemmed words, then whole identifiers."""
    words = [w for w in WORD.findall(text.lower()) if w not in BM25_STOPWORDS]
    stems = stem_words(words)
    terms = [s for s in stems if len(s) <= MAX_TOKEN_CHARS]
    return terms + _identifiers(text)


def has_identifier(text: str) -> bool:
    """Whether the text holds a compound identifier with a mixed letter+digit part."""
    for match in IDENTIFIER.finditer(text):
        parts = re.split(r"[-./]", match.group(0))
        if any(MIXED.fullmatch(part) for part in parts):
            return True
    return False


def term_frequencies(text: str) -> Counter[str]:
    return Counter(analyze(text))


def query_terms(text: str) -> list[str]:
    """Distinct query terms in first-seen order (a repeated word counts once)."""
    return list(dict.fromkeys(analyze(text)))


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def term_score(tf: int, dl: int, avgdl: float, params: BM25Params) -> float:
    """The tf part of BM25 for one term in one document (multiply by idf)."""
    norm = params.k1 * (1.0 - params.b + params.b * dl / avgdl)
    return tf * (params.k1 + 1.0) / (tf + norm)
