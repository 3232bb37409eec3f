"""The one home of language resources: word lists, the sentence splitter, the stemmer.

Everything that reads English text — chunking, BM25 analysis, planning, mining, counter
queries, verification, quote checks and synthesis — takes its word lists, its sentence
boundaries and its Snowball stemmer from here, so two stages never disagree on where a
sentence ends or what a stopword is. Pure and deterministic; no models, no ORM.

Contents: normalization and fingerprints; :func:`split_sentences` (with
:data:`ABBREVIATIONS`); stopword lists (:data:`STOPWORDS` and the few task lists that
must differ from it, each saying why); :func:`stem` / :func:`stem_words`; negation,
direction (:data:`UP_WORDS`, :data:`DOWN_WORDS`, :data:`OPPOSITE_WORDS`,
:data:`EFFECT_VERB_OPPOSITES`) and antonym tables; hedges; numbers with units.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


def _wordset(words: str) -> frozenset[str]:
    """A word list written as whitespace-separated words."""
    return frozenset(words.split())


_WS = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+(?:[.,]\d+)*")

# Function words: what is left are a text's content words (mining, counter queries,
# verification, quote checks) and the terms of an arXiv query.
STOPWORDS = _wordset(
    """
    a an the of in on at to for from by with without within into onto over under and or
    but nor so yet as than then that this these those there here it its it's is are was
    were be been being am do does did doing has have had having can could may might must
    shall should will would which who whom whose what when where why how all any both
    each few more most other some such only own same very s t just also not no nor too
    their they them we our us you your he she his her i me my mine if while whereas
    about against between through during before after above below up down out off again
    further once per via however although though thus hence therefore
    """
)

# The word lists below differ from STOPWORDS on purpose; each says what depends on it.

# Lucene's English stop words (bm25s's STOPWORDS_EN): the BM25 analyzer of
# ``research.pipeline.retrieve.sparse``. Every passage's postings were built with this
# list, so changing it means re-indexing every library.
BM25_STOPWORDS = _wordset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the
    their then there these they this to was will with
    """
)
# The planner's keywords of a question (``research.pipeline.planner.keywords``): query
# texts are made of what is left, so comparison words go too, and "more", "less"
# stay out of queries. Changing it changes every proposed plan.
QUESTION_STOPWORDS = _wordset(
    """
    a an the of in on at to for from by with without about into over under than then and
    or but nor not no is are was were be been being do does did doing has have had can
    could should would will shall may might must it its this that these those what which
    who whom whose why how when where whether there their they them we our you your i me
    my he she his her as if so such any some more most less much many very also just only
    between among versus vs compared compare comparison difference
    """
)
# Synthesis's check that a report sentence says nothing its cited claims do not
# (``research.pipeline.synthesize.check_sentence``): discourse connectives are ignored,
# but negations, quantifiers and modal verbs are kept, since adding one is an overstatement.
SYNTHESIS_STOPWORDS = _wordset(
    """
    a an the of in on at to for from by with as and or but is are was were be been being
    this that these those it its their there which who whom whose than then also
    additionally moreover furthermore however while whereas both respectively addition
    into onto over under between among within about such has have had do does did other
    another further overall
    """
)

NEGATIONS = _wordset(
    """
    not no never none nor neither without cannot can't don't doesn't didn't isn't aren't
    wasn't weren't hasn't haven't hadn't won't wouldn't shouldn't couldn't lack lacks
    lacked lacking absence absent fail fails failed unable
    """
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

# The verb that separates a claim's subject (population, exposure) from its object
# (outcome): a direction word, or a common relation verb.
RELATION_VERB = re.compile(
    r"\b(is|are|was|were|has|have|had|can|may|might|could|does|do|did|will|would|"
    r"caus\w*|lead\w*|led|result\w*|associat\w*|correlat\w*|predict\w*|affect\w*|"
    r"increas\w*|decreas\w*|reduc\w*|rais\w*|lower\w*|improv\w*|inhibit\w*|prevent\w*|"
    r"promot\w*|induc\w*|enhanc\w*|suppress\w*|block\w*|activat\w*|requir\w*|"
    r"regulat\w*|mediat\w*|protect\w*|impair\w*|contribut\w*)\b",
    re.IGNORECASE,
)
UP_WORDS = _wordset(
    """
    increase increases increased increasing raise raises raised raising elevate elevates
    elevated elevating enhance enhances enhanced enhancing promote promotes promoted
    promoting improve improves improved improving higher greater more upregulate
    upregulates upregulated upregulation induce induces induced inducing activate
    activates activated activation stimulate stimulates stimulated accelerate
    accelerates accelerated boost boosts boosted augment augments augmented gain gains
    exacerbate exacerbates exacerbated worsens worsened rise rises rose risen grew
    """
)
DOWN_WORDS = _wordset(
    """
    decrease decreases decreased decreasing reduce reduces reduced reducing lower lowers
    lowered lowering diminish diminishes diminished diminishing suppress suppresses
    suppressed suppressing inhibit inhibits inhibited inhibiting impair impairs impaired
    impairing less fewer downregulate downregulates downregulated downregulation
    attenuate attenuates attenuated block blocks blocked prevent prevents prevented
    preventing slow slows slowed decline declines declined drop drops dropped loss lose
    loses lost weaken weakens weakened protect protects protected alleviate alleviates
    alleviated fell fallen
    """
)
# Words that say how an outcome is measured, not what it is ("the risk of default"):
# the report's bottom line needs a finding to name the outcome itself.
MEASURE_WORDS = _wordset(
    """
    risk risks rate rates incidence incidences level levels odds chance chances likelihood
    occurrence occurrences number numbers proportion proportions prevalence frequency
    probability hazard hazards
    """
)
# A claim's opposite for its negation counter query (``research.pipeline.counter.negate``):
# the first of these words in the claim is swapped.
# Nouns whose "for" belongs to an effect question's outcome ("the need for surgery", "the
# risk for default", "demand for petrol"), not a population (research.pipeline.effect).
FOR_COMPLEMENT_NOUNS = _wordset(
    """need needs demand demands risk risks time times cost costs support preference
    preferences eligibility requirement requirements request requests search capacity
    potential chance chances odds likelihood admission admissions referral referrals
    prescription prescriptions spending appetite desire"""
)

# Adverbs that open a clause before its verb: "… but only moderately reduce CVD mortality".
LEADING_ADVERBS = _wordset("only also still further even then not yet")


def is_adverb(word: str) -> bool:
    """One of :data:`LEADING_ADVERBS`, or an -ly word longer than four letters
    ("moderately"; not "fly")."""
    low = word.lower().strip(",")
    return low in LEADING_ADVERBS or (low.endswith("ly") and len(low) > 4)


# Who was counted, never what was measured: "the number of people with VDD" reports no
# outcome (research.pipeline.claims.outcome.other_outcome).
PEOPLE_NOUNS = _wordset(
    """people persons person patients patient participants subjects individuals adults
    children women men cases users workers households residents respondents"""
)

# Who a population is in general terms (age, sex, health, size): a question's population
# minus these words is what a finding must name to be about it ("patients with heart
# failure" -> heart failure; "older adults" -> nothing to check: the plan's scope reads ages).
POPULATION_GENERIC = PEOPLE_NOUNS | _wordset(
    """older old elderly aged age ages young younger adolescents adolescent teenagers
    teenager teens infants infant toddlers babies seniors senior middle-aged adult child
    woman man female male females males healthy general large small big overall typical
    different various new community-dwelling living type stage grade class early late
    advanced chronic acute mild moderate severe"""
)

# Word starts that place a question in a research field, for the planner's wording of an
# effect plan (research.pipeline.planner.field_register).
FIELD_CUES = {
    "clinical": _wordset(
        """patient clinical disease therap treatment drug dose dosage supplement
        cancer tumor tumour mortality infection vaccin symptom placebo pregnan diabet
        cardiovascular heart stroke blood surgery surgical medication obesity
        depressi anxiety dementia pain hospital insulin cholesterol
        hypertension asthma hiv covid virus bone muscle kidney liver nutrition diet
        smoking alcohol sleep exercise"""
    ),
    "policy": _wordset(
        """tax wage employment unemployment policy policies price inflation market regulat
        subsid emission gdp income trade tariff housing rent welfare poverty crime
        police voter election immigra carbon economic economy investment fiscal
        monetary labor labour worker productivity school tuition"""
    ),
    "technical": _wordset(
        """software code coding developer programming compiler latency throughput database
        api algorithm neural gpu cpu memory cache server network framework bug
        deploy microservice kubernetes cloud encryption vulnerab retrieval typing
        typescript python rust java language-model llm benchmark refactor
        continuous integration open-source"""
    ),
}

# --- question grammar (research.pipeline.planner) ----------------------------------------

# A version number is one token everywhere a question or a scope is read: "3.13", "2.0.1",
# "v1.2", never "3" and "13".
VERSION = re.compile(r"\b[vV]?\d+(?:\.\d+)+\b")
# A question's word: a version number, else a word with its inner hyphens, apostrophes and
# pluses ("open-source", "C++", "single-threaded").
QUESTION_TOKEN = re.compile(rf"{VERSION.pattern}|[\w][\w'+-]*")


def version_key(version: str) -> tuple[int, ...]:
    """A version's parts as numbers, for ordering: "v3.13" -> (3, 13); "3.9" < "3.13"."""
    return tuple(int(part) for part in version.lstrip("vV").split(".") if part.isdigit())


# Closed word classes of English questions, for cutting a compound question into its parts
# (:func:`question_clauses`, :func:`coordinated_items`): the wh-words that open a question,
# the auxiliaries that follow them, the copulas among those, and the prepositions that
# introduce a clause's last phrase ("cost in A and B", "remain for Z"). "between" is not
# one: "between A and B" names one pair, not two parts.
QUESTION_OPENERS = _wordset("what which who whom whose how why when where whether")
AUXILIARIES = _wordset(
    "do does did is are was were can could will would should shall has have had may might must"
)
COPULAS = _wordset("is are was were")
TAIL_PREPOSITIONS = _wordset(
    "in on for of to with among across at from by under during within against about"
)
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


OPPOSITE_WORDS = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "increasing": "decreasing",
    "higher": "lower",
    "more": "less",
    "improves": "worsens",
    "improved": "worsened",
    "improve": "worsen",
    "reduces": "increases",
    "reduced": "increased",
    "reduce": "increase",
    "promotes": "inhibits",
    "promoted": "inhibited",
    "inhibits": "promotes",
    "inhibited": "promoted",
    "prevents": "causes",
    "causes": "prevents",
    "lower": "higher",
    "less": "more",
    "decreases": "increases",
    "decreased": "increased",
    "decrease": "increase",
}
# The effect verbs the planner recognizes in "Does X <verb> Y?" and the verb of its
# counter-evidence query ("X increases Y"). Verbs only: "lower" is the verb (-> "raise"),
# where OPPOSITE_WORDS reads it as the adjective (-> "higher").
EFFECT_VERB_OPPOSITES = {
    "reduce": "increase",
    "reduces": "increases",
    "lower": "raise",
    "lowers": "raises",
    "decrease": "increase",
    "decreases": "increases",
    "increase": "reduce",
    "increases": "reduces",
    "raise": "lower",
    "raises": "lowers",
    "improve": "worsen",
    "improves": "worsens",
    "prevent": "cause",
    "prevents": "causes",
    "cause": "prevent",
    "causes": "prevents",
    "affect": "not affect",
    "affects": "does not affect",
    "protect": "harm",
    "protects": "harms",
    "help": "harm",
    "helps": "harms",
    "outperform": "underperform",
    "outperforms": "underperforms",
}
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
# --- sentences ------------------------------------------------------------------------

# A "." after one of these words (or after a single letter, or a dotted word such as
# "e.g" or "U.S") does not end a sentence.
ABBREVIATIONS = frozenset(
    {"al", "approx", "ca", "cf", "co", "dr", "e.g", "eq", "eqs", "et", "etc", "fig", "figs"}
    | {"i.e", "inc", "jr", "ltd", "mr", "mrs", "ms", "no", "nos", "pp", "prof", "ref", "refs"}
    | {"resp", "sr", "st", "vs", "vol"}
)
# A sentence ends at . ! or ? (plus closing quotes/brackets) before whitespace and a
# plausible sentence start; abbreviations and initials are filtered afterwards.
_BOUNDARY = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])")


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
def stemmer() -> Any:
    """The Snowball English stemmer (PyStemmer), loaded once per process."""
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return str(stemmer().stemWord(word))


def stem_words(words: list[str]) -> list[str]:
    """Stems of many words in one call (the BM25 analyzer's hot path)."""
    return list(stemmer().stemWords(words))


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
        if not math.isfinite(value):  # "1" * 310 overflows: no quantity, never Infinity
            continue
        found.append(Quantity(m.group(0).strip(), value, _canonical_unit(unit)))
    return found


def years(text: str) -> list[int]:
    return sorted({int(y) for y in _YEAR_RE.findall(text)})
