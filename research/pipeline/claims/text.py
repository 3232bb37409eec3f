"""Lexical helpers shared by mining and verification: deterministic, no models.

Normalization and fingerprints, sentence spans with offsets, content words and stems,
negation, direction words, hedges, and numbers with units. Everything here is pure.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_WS = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+(?:[.,]\d+)*")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "without",
        "within",
        "into",
        "onto",
        "over",
        "under",
        "and",
        "or",
        "but",
        "nor",
        "so",
        "yet",
        "as",
        "than",
        "then",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "it",
        "its",
        "it's",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "has",
        "have",
        "had",
        "having",
        "can",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "will",
        "would",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "very",
        "s",
        "t",
        "just",
        "also",
        "not",
        "no",
        "nor",
        "too",
        "their",
        "they",
        "them",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "she",
        "his",
        "her",
        "i",
        "me",
        "my",
        "mine",
        "if",
        "while",
        "whereas",
        "about",
        "against",
        "between",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "up",
        "down",
        "out",
        "off",
        "again",
        "further",
        "once",
        "per",
        "via",
        "however",
        "although",
        "though",
        "thus",
        "hence",
        "therefore",
    ]
)

NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nor",
        "neither",
        "without",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "hasn't",
        "haven't",
        "hadn't",
        "won't",
        "wouldn't",
        "shouldn't",
        "couldn't",
        "lack",
        "lacks",
        "lacked",
        "lacking",
        "absence",
        "absent",
        "fail",
        "fails",
        "failed",
        "unable",
    ]
)
# Phrases that state the absence of an effect ("no significant difference").
NULL_EFFECT = re.compile(
    r"\b(no (?:significant |statistically significant |detectable |measurable )?"
    r"(?:effect|difference|change|association|correlation|increase|decrease|benefit|impact)"
    r"|not (?:statistically )?significant(?:ly)?|did not (?:differ|change|affect|alter)"
    r"|was not associated|were not associated|is not associated|are not associated"
    r"|unaffected|unchanged|no longer)\b",
    re.IGNORECASE,
)

UP_WORDS = frozenset(
    [
        "increase",
        "increases",
        "increased",
        "increasing",
        "raise",
        "raises",
        "raised",
        "raising",
        "elevate",
        "elevates",
        "elevated",
        "elevating",
        "enhance",
        "enhances",
        "enhanced",
        "enhancing",
        "promote",
        "promotes",
        "promoted",
        "promoting",
        "improve",
        "improves",
        "improved",
        "improving",
        "higher",
        "greater",
        "more",
        "upregulate",
        "upregulates",
        "upregulated",
        "upregulation",
        "induce",
        "induces",
        "induced",
        "inducing",
        "activate",
        "activates",
        "activated",
        "activation",
        "stimulate",
        "stimulates",
        "stimulated",
        "accelerate",
        "accelerates",
        "accelerated",
        "boost",
        "boosts",
        "boosted",
        "augment",
        "augments",
        "augmented",
        "gain",
        "gains",
        "exacerbate",
        "exacerbates",
        "exacerbated",
        "worsens",
        "worsened",
        "rise",
        "rises",
        "rose",
        "risen",
    ]
)
DOWN_WORDS = frozenset(
    [
        "decrease",
        "decreases",
        "decreased",
        "decreasing",
        "reduce",
        "reduces",
        "reduced",
        "reducing",
        "lower",
        "lowers",
        "lowered",
        "lowering",
        "diminish",
        "diminishes",
        "diminished",
        "diminishing",
        "suppress",
        "suppresses",
        "suppressed",
        "suppressing",
        "inhibit",
        "inhibits",
        "inhibited",
        "inhibiting",
        "impair",
        "impairs",
        "impaired",
        "impairing",
        "less",
        "fewer",
        "downregulate",
        "downregulates",
        "downregulated",
        "downregulation",
        "attenuate",
        "attenuates",
        "attenuated",
        "block",
        "blocks",
        "blocked",
        "prevent",
        "prevents",
        "prevented",
        "preventing",
        "slow",
        "slows",
        "slowed",
        "decline",
        "declines",
        "declined",
        "drop",
        "drops",
        "dropped",
        "loss",
        "lose",
        "loses",
        "lost",
        "weaken",
        "weakens",
        "weakened",
        "protect",
        "protects",
        "protected",
        "alleviate",
        "alleviates",
        "alleviated",
    ]
)
ANTONYM_PAIRS = (
    ("positive", "negative"),
    ("positively", "negatively"),
    ("benign", "malignant"),
    ("beneficial", "harmful"),
    ("safe", "unsafe"),
    ("effective", "ineffective"),
    ("sufficient", "insufficient"),
    ("necessary", "unnecessary"),
    ("presence", "absence"),
    ("present", "absent"),
    ("gain", "loss"),
    ("agonist", "antagonist"),
    ("early", "late"),
    ("high", "low"),
    ("larger", "smaller"),
    ("longer", "shorter"),
    ("before", "after"),
    ("more", "less"),
    ("above", "below"),
    ("dominant", "recessive"),
    ("activation", "inhibition"),
    ("resistant", "susceptible"),
)
_ANTONYMS: dict[str, str] = {}
for _a, _b in ANTONYM_PAIRS:
    _ANTONYMS[_a] = _b
    _ANTONYMS[_b] = _a

HEDGES = (
    "may",
    "might",
    "could",
    "possibly",
    "possible",
    "potentially",
    "potential",
    "likely",
    "unlikely",
    "suggest",
    "suggests",
    "suggested",
    "suggesting",
    "appear",
    "appears",
    "appeared",
    "seem",
    "seems",
    "presumably",
    "perhaps",
    "putative",
    "hypothesize",
    "hypothesized",
    "speculate",
    "preliminary",
    "indicate",
    "indicates",
    "may be",
    "is thought",
    "are thought",
    "is believed",
    "it is unclear",
    "remains unclear",
    "associated with",
)
_HEDGE_RE = re.compile(r"\b(" + "|".join(re.escape(h) for h in HEDGES) + r")\b", re.IGNORECASE)

UNITS = (
    "%",
    "percent",
    "per cent",
    "mg/kg",
    "mg/day",
    "mg/dl",
    "mg/l",
    "mmol/l",
    "µg",
    "μg",
    "ug",
    "mg",
    "kg",
    "g",
    "ng",
    "ml",
    "l",
    "mm",
    "cm",
    "km",
    "m",
    "nm",
    "µm",
    "ms",
    "s",
    "sec",
    "seconds",
    "min",
    "minutes",
    "h",
    "hours",
    "days",
    "day",
    "weeks",
    "week",
    "months",
    "month",
    "years",
    "year",
    "fold",
    "-fold",
    "x",
    "times",
    "patients",
    "participants",
    "subjects",
    "people",
    "cases",
    "deaths",
    "mice",
    "rats",
    "cells",
    "gb",
    "mb",
    "kb",
    "tb",
    "ghz",
    "mhz",
    "hz",
    "kw",
    "w",
    "v",
    "usd",
    "$",
    "€",
    "°c",
    "k",
    "million",
    "billion",
    "thousand",
    "tokens",
    "parameters",
)
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9\-])(?P<cur>[$€])?(?P<num>\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"
    r"(?:\s*(?P<unit>" + _UNIT_ALT + r")(?![A-Za-z]))?",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"\b(1[6-9]\d\d|20\d\d)\b")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|vs|fig|figs|ref|refs|no|approx|ca|cf|dr|mr|mrs|ms|prof|st|"
    r"inc|ltd|co|jr|sr|al|eq|resp|incl|vol|pp)\.$)|(?:\b[A-Z]\.$)",
    re.IGNORECASE,
)
_SENT_END = re.compile(r"(?<=[.!?])[\"'\u201d)\]]*\s+(?=[\"'\u201c(\[]?[A-Z0-9])|\n\s*\n")


def normalize_text(text: str) -> str:
    """Unicode NFKC, lower case, collapsed whitespace: the identity of a proposition."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def claim_fingerprint(text: str) -> str:
    """sha256 of the normalized claim text (a reworded claim gets a new fingerprint)."""
    return sha256_hex(normalize_text(text))


def passage_fingerprint(text: str) -> str:
    """sha256 of the exact passage text: quotes bind to these characters, so no folding."""
    return sha256_hex(text)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@lru_cache(maxsize=1)
def _stemmer() -> object:
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry meaning (no stopwords, no negations, no 1-letter)."""
    return [w for w in words(text) if w not in STOPWORDS and w not in NEGATIONS and len(w) > 1]


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def coverage(needle: str | set[str], haystack: str | set[str]) -> float:
    """Share of the needle's content stems found in the haystack (1.0 for an empty needle)."""
    a = content_stems(needle) if isinstance(needle, str) else needle
    b = content_stems(haystack) if isinstance(haystack, str) else haystack
    return 1.0 if not a else len(a & b) / len(a)


def is_meaningful_quote(quote: str, *, min_chars: int = 20, min_content_words: int = 3) -> bool:
    """A quote long enough to mean something: "the" or "in 2020" prove nothing."""
    return len(quote.strip()) >= min_chars and len(content_words(quote)) >= min_content_words


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """[start, end) offsets of the sentences of ``text[start:end]``, without outer spaces."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENT_END.finditer(text, start, end):
        stop = match.start()
        if text[stop - 1] == "." and _ABBREV.search(text[cursor:stop]):
            continue
        _append_span(text, cursor, stop + len(match.group(0).rstrip()) - 0, spans)
        cursor = match.end()
    _append_span(text, cursor, end, spans)
    return spans


_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?=(?:but|whereas|while|although|however)\b)")


def clause_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A sentence's independent clauses ("P, but Q" -> "P", "but Q"), each long enough to
    quote; the whole sentence when it has no such break. Offsets stay exact."""
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _CLAUSE_BREAK.finditer(text, start, end):
        spans.append((cursor, match.start()))
        cursor = match.end()
    spans.append((cursor, end))
    if len(spans) == 1 or not all(is_meaningful_quote(text[a:b]) for a, b in spans):
        return [(start, end)]
    return spans


def _append_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


def negated(text: str) -> bool:
    """True when the text states a negation or the absence of an effect."""
    return bool(NULL_EFFECT.search(text)) or any(w in NEGATIONS for w in words(text))


def negation_count(text: str) -> int:
    return sum(1 for w in words(text) if w in NEGATIONS) + len(NULL_EFFECT.findall(text))


def direction(text: str) -> int:
    """+1 when the text speaks of increase, -1 of decrease, 0 for neither or both."""
    ws = words(text)
    up = sum(1 for w in ws if w in UP_WORDS)
    down = sum(1 for w in ws if w in DOWN_WORDS)
    return (up > down) - (down > up)


def antonym_clash(a: str, b: str) -> list[tuple[str, str]]:
    """Antonym pairs where one word occurs only in ``a`` and its opposite only in ``b``."""
    wa, wb = set(words(a)), set(words(b))
    return sorted(
        (w, _ANTONYMS[w])
        for w in wa - wb
        if w in _ANTONYMS and _ANTONYMS[w] in wb and _ANTONYMS[w] not in wa
    )


def hedges(text: str) -> list[str]:
    return sorted({m.group(1).lower() for m in _HEDGE_RE.finditer(text)})


@dataclass(frozen=True)
class Quantity:
    """A number as written, its value, and its unit (lower-cased; empty when none)."""

    text: str
    value: float
    unit: str

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text, "value": self.value, "unit": self.unit}


def _canonical_unit(unit: str) -> str:
    u = unit.lower().strip()
    if u in {"percent", "per cent"}:
        return "%"
    if u in {"-fold", "times", "x"}:
        return "fold"
    if u in {"sec", "seconds"}:
        return "s"
    if u in {"minutes"}:
        return "min"
    if u in {"hours"}:
        return "h"
    return {"μg": "µg", "ug": "µg", "day": "days", "week": "weeks", "month": "months"}.get(
        u, {"year": "years"}.get(u, u)
    )


def quantities(text: str) -> list[Quantity]:
    """Numbers with their units; years are left to :func:`years`."""
    found: list[Quantity] = []
    for m in _NUMBER_RE.finditer(text):
        raw = m.group("num")
        unit = m.group("unit") or m.group("cur") or ""
        if not unit and _YEAR_RE.fullmatch(raw):
            continue
        try:
            value = float(raw.replace(",", ""))
        except ValueError:
            continue
        found.append(Quantity(m.group(0).strip(), value, _canonical_unit(unit)))
    return found


def years(text: str) -> list[int]:
    return sorted({int(y) for y in _YEAR_RE.findall(text)})
