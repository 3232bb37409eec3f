"""Where sentences, clauses and the parts of a compound question begin and end.

:func:`split_sentences` is the one sentence splitter: passages are chunked with it (their
stored sentence offsets come from here), and mining, quote checks and synthesis split with
it too, so two stages never disagree on where a sentence ends. A "." ends no sentence after
one of :data:`ABBREVIATIONS`. Below sentences: a sentence's clauses for quoting
(:func:`clause_spans`) and for mining (:func:`clause_pieces`), a compound question's
questions (:func:`question_clauses`) and a coordinated phrase's items
(:func:`coordinated_items`). Pure and deterministic.
"""

from __future__ import annotations

import re

from research.pipeline.language.lexicon import AUXILIARIES, QUESTION_OPENERS, is_meaningful_quote

# A "." after one of these words (or after a single letter, or a dotted word such as
# "e.g" or "U.S") does not end a sentence.
ABBREVIATIONS = frozenset(
    {"al", "approx", "ca", "cf", "co", "dr", "e.g", "eq", "eqs", "et", "etc", "fig", "figs"}
    | {"i.e", "inc", "jr", "ltd", "mr", "mrs", "ms", "no", "nos", "pp", "prof", "ref", "refs"}
    | {"resp", "sr", "st", "vs", "vol"}
)
# The punctuation a sentence ends with (also read by citation markers glued to a sentence's
# end: research.pipeline.language.citations).
SENTENCE_END = "[.!?]"
# A sentence ends at . ! or ? (plus closing quotes/brackets) before whitespace and a
# plausible sentence start; abbreviations and initials are filtered afterwards.
_BOUNDARY = re.compile(SENTENCE_END + r"[\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])")
# Text that has ended its sentence: . ! ? or an ellipsis, then any closing quotes/brackets.
_ENDED = re.compile(r"(?:" + SENTENCE_END + r"|\u2026)[\"'\u201d\u2019)\]]*\Z")


def full_stop(text: str) -> str:
    """``text`` (right-trimmed) ending its sentence: a full stop added unless it ends on
    . ! ? or an ellipsis, closing quotes or brackets after them allowed ('… slower."');
    empty text stays empty."""
    text = text.rstrip()
    return text if not text or _ENDED.search(text) else text + "."


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans of ``text[start:end]``: absolute ``[start, end)`` offsets into
    ``text``, whitespace-trimmed, in order, never empty.

    The one sentence splitter: passages are chunked with it (their stored sentence
    offsets come from here), and mining, quote checks and synthesis split with it too.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _BOUNDARY.finditer(text, start, end):
        if _abbreviation_before(text, cursor, match.start()):
            continue
        spans.append((cursor, match.end()))
        cursor = match.end()
    spans.append((cursor, end))
    return [trimmed for span in spans if (trimmed := trim_span(text, *span))]


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.")


def _abbreviation_before(text: str, cursor: int, dot: int) -> bool:
    """Does the boundary at ``dot`` end an abbreviation ("e.g.", "Fig.", a lone initial)?

    Reads only the word that ends at ``dot`` (scanning back no further than the
    current sentence's start), so the splitter stays linear in the text: the word
    before each boundary is read once, however many boundaries are skipped.
    """
    if text[dot] != ".":
        return False
    begin = dot
    while begin > cursor and text[begin - 1] in _WORD_CHARS:
        begin -= 1
    while begin < dot and text[begin] == ".":  # a word starts with a letter
        begin += 1
    if begin == dot:
        return False
    word = text[begin:dot].lower()
    return word in ABBREVIATIONS or len(word) == 1 or word.count(".") >= 1


def trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``(start, end)`` without outer whitespace; None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


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


# Where mining cuts a sentence into candidate clauses
# (:func:`research.pipeline.claims.mine.split_coordination`): a semicolon, a comma and a
# contrastive conjunction, or a comma and "and" ("P; Q", "P, but Q", "P, and Q"). Unlike
# :data:`_CLAUSE_BREAK` it also breaks at ", and", and the conjunction goes with the break,
# not with the clause after it.
_COORDINATE_BREAK = re.compile(r";\s+|,\s+(?:but|whereas|while|although)\s+|,\s+and\s+(?=\S)")


def clause_pieces(sentence: str) -> tuple[list[str], list[str]]:
    """The pieces of a sentence between its clause breaks (:data:`_COORDINATE_BREAK`) and
    the breaks themselves, in order: "P, but Q; R" -> (["P", "Q", "R"], [", but ", "; "]).
    Pieces and breaks taken in turn give back the sentence. A piece is only a candidate:
    mining keeps it apart when it has a verb (and a subject) of its own."""
    return _COORDINATE_BREAK.split(sentence), _COORDINATE_BREAK.findall(sentence)


_OPENER_ALT = "|".join(sorted(QUESTION_OPENERS))
_AUX_ALT = "|".join(sorted(AUXILIARIES))
# Where a second question starts: a conjunction or a semicolon before a wh-word ("…, and
# what limitations remain"), or a comma and conjunction before an auxiliary ("…, and does
# it …").
_QUESTION_JOIN = re.compile(
    rf"(?:\s*[,;]\s*(?:and|or|but)?|\s+(?:and|or|but))\s+(?=(?:{_OPENER_ALT})\b)"
    rf"|\s*(?:,\s*(?:and|or|but)|;)\s+(?=(?:{_AUX_ALT})\b)",
    re.IGNORECASE,
)
# The joints of a coordinated phrase: "A, B and C", "A or B".
_COORDINATION = re.compile(r"\s*,\s*(?:and|or)\s+|\s*,\s+|\s+(?:and|or)\s+", re.IGNORECASE)


def question_clauses(question: str) -> list[str]:
    """The coordinated questions of one question, in order, without the joining words:
    "What does X cost, and what limitations remain for Z?" -> ["What does X cost", "what
    limitations remain for Z"]. A simple question is one clause."""
    text = " ".join(question.split()).rstrip(" ?.!")
    return [part.strip(" ,;") for part in _QUESTION_JOIN.split(text) if part.strip(" ,;")]


def coordinated_items(phrase: str) -> list[str]:
    """The conjuncts of a coordinated phrase: "A, B and C" -> [A, B, C]; one item when
    there is no coordination."""
    return [item.strip() for item in _COORDINATION.split(phrase) if item.strip()]
