"""The lexicon: English word lists, and the tokenizer and stemmer that read words.

Stopwords (:data:`STOPWORDS`, and the few task lists that must differ from it, each saying
why); negations; hedges; the closed word classes of questions (openers, auxiliaries,
copulas, tail prepositions); nouns of measures, of people and of populations; the field
cues of the planner; the word lists of synthesis's sentence check and of the answer table.
Then :func:`words`, the Snowball stemmer (:func:`stem`, :func:`stem_words`), content words
and their :func:`coverage`. Pure and deterministic; no models, no ORM.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from research.pipeline.language.quantities import VERSION


def wordset(words: str) -> frozenset[str]:
    """A word list written as whitespace-separated words."""
    return frozenset(words.split())


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*|\d+(?:[.,]\d+)*")

# Function words: what is left are a text's content words (mining, counter queries,
# verification, quote checks) and the terms of an arXiv query.
STOPWORDS = wordset(
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
BM25_STOPWORDS = wordset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the
    their then there these they this to was will with
    """
)
# The planner's keywords of a question (``research.pipeline.planner.keywords``): query
# texts are made of what is left, so comparison words go too, and "more", "less"
# stay out of queries. Changing it changes every proposed plan.
QUESTION_STOPWORDS = wordset(
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
SYNTHESIS_STOPWORDS = wordset(
    """
    a an the of in on at to for from by with as and or but is are was were be been being
    this that these those it its their there which who whom whose than then also
    additionally moreover furthermore however while whereas both respectively addition
    into onto over under between among within about such has have had do does did other
    another further overall
    """
)

NEGATIONS = wordset(
    """
    not no never none nor neither without cannot can't don't doesn't didn't isn't aren't
    wasn't weren't hasn't haven't hadn't won't wouldn't shouldn't couldn't lack lacks
    lacked lacking absence absent fail fails failed unable
    """
)

# Words that say how an outcome is measured, not what it is ("the risk of default"):
# the report's bottom line needs a finding to name the outcome itself.
MEASURE_WORDS = wordset(
    """
    risk risks rate rates incidence incidences level levels odds chance chances likelihood
    occurrence occurrences number numbers proportion proportions prevalence frequency
    probability hazard hazards
    """
)
# Nouns whose "for" belongs to an effect question's outcome ("the need for surgery", "the
# risk for default", "demand for petrol"), not a population (research.pipeline.effect).
FOR_COMPLEMENT_NOUNS = wordset(
    """need needs demand demands risk risks time times cost costs support preference
    preferences eligibility requirement requirements request requests search capacity
    potential chance chances odds likelihood admission admissions referral referrals
    prescription prescriptions spending appetite desire"""
)

# Adverbs that open a clause before its verb: "… but only moderately reduce CVD mortality".
LEADING_ADVERBS = wordset("only also still further even then not yet")


def is_adverb(word: str) -> bool:
    """One of :data:`LEADING_ADVERBS`, or an -ly word longer than four letters
    ("moderately"; not "fly")."""
    low = word.lower().strip(",")
    return low in LEADING_ADVERBS or (low.endswith("ly") and len(low) > 4)


# Who was counted, never what was measured: "the number of people with VDD" reports no
# outcome (research.pipeline.claims.outcome.other_outcome).
PEOPLE_NOUNS = wordset(
    """people persons person patients patient participants subjects individuals adults
    children women men cases users workers households residents respondents"""
)

# Who a population is in general terms (age, sex, health, size): a question's population
# minus these words is what a finding must name to be about it ("patients with heart
# failure" -> heart failure; "older adults" -> nothing to check: the plan's scope reads ages).
POPULATION_GENERIC = PEOPLE_NOUNS | wordset(
    """older old elderly aged age ages young younger adolescents adolescent teenagers
    teenager teens infants infant toddlers babies seniors senior middle-aged adult child
    woman man female male females males healthy general large small big overall typical
    different various new community-dwelling living type stage grade class early late
    advanced chronic acute mild moderate severe"""
)

# Word starts that place a question in a research field, for the planner's wording of an
# effect plan (research.pipeline.planner.field_register).
FIELD_CUES = {
    "clinical": wordset(
        """patient clinical disease therap treatment drug dose dosage supplement
        cancer tumor tumour mortality infection vaccin symptom placebo pregnan diabet
        cardiovascular heart stroke blood surgery surgical medication obesity
        depressi anxiety dementia pain hospital insulin cholesterol
        hypertension asthma hiv covid virus bone muscle kidney liver nutrition diet
        smoking alcohol sleep exercise"""
    ),
    "policy": wordset(
        """tax wage employment unemployment policy policies price inflation market regulat
        subsid emission gdp income trade tariff housing rent welfare poverty crime
        police voter election immigra carbon economic economy investment fiscal
        monetary labor labour worker productivity school tuition"""
    ),
    "technical": wordset(
        """software code coding developer programming compiler latency throughput database
        api algorithm neural gpu cpu memory cache server network framework bug
        deploy microservice kubernetes cloud encryption vulnerab retrieval typing
        typescript python rust java language-model llm benchmark refactor
        continuous integration open-source"""
    ),
}


# --- question grammar (research.pipeline.planner) ----------------------------------------

# A question's word: a version number, else a word with its inner hyphens, apostrophes and
# pluses ("open-source", "C++", "single-threaded").
QUESTION_TOKEN = re.compile(rf"{VERSION.pattern}|[\w][\w'+-]*")

# Closed word classes of English questions, for cutting a compound question into its parts
# (:func:`question_clauses`, :func:`coordinated_items`): the wh-words that open a question,
# the auxiliaries that follow them, the copulas among those, and the prepositions that
# introduce a clause's last phrase ("cost in A and B", "remain for Z"). "between" is not
# one: "between A and B" names one pair, not two parts.
QUESTION_OPENERS = wordset("what which who whom whose how why when where whether")
AUXILIARIES = wordset(
    "do does did is are was were can could will would should shall has have had may might must"
)
COPULAS = wordset("is are was were")
TAIL_PREPOSITIONS = wordset(
    "in on for of to with among across at from by under during within against about"
)

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


# --- synthesis's sentence check (research.pipeline.synthesize.check_sentence) -----------

# Words that widen or strengthen a claim; each is a finding unless a cited claim uses it.
BROADENING_WORDS = wordset(
    """all always every everyone everything never none nobody any universal universally
    generally general guarantee guarantees guaranteed prove proves proved proven
    definitely certainly clearly undoubtedly conclusively must only entirely completely"""
)
# A cited claim's hedge: a report sentence citing a hedged claim must keep a hedge.
SYNTHESIS_HEDGES = wordset(
    """may might can could suggest suggests suggested likely possibly appear appears"""
)
# Words that draw a conclusion or a cause: a sentence citing several claims that adds one
# bridges them into a claim none of them makes.
BRIDGE_WORDS = wordset(
    """therefore thus hence because so consequently cause causes caused leads lead result
    results implies imply explains explain due"""
)

# --- the answer table's noun phrases (reports.exports.answer.noun_phrase) ----------------

# Words a table cell's phrase must not end on ("… compared with"), nor follow a leading
# past participle with ("reached with the recommended intakes": a verb phrase).
PHRASE_FUNCTION_WORDS = wordset(
    "a an the and or of in on to with that which who was were is are be been would could "
    "should may might can will did does do had has have resulted led than by for as at"
)
# A verb or modal inside a phrase means the facet split missed the finding's own verb
# ("Observational data cannot establish that supplementation would"): not a noun phrase.
PHRASE_CLAUSE_WORDS = wordset(
    "cannot could would should may might must can will did does do was were is are resulted "
    "led showed found suggest suggests suggested"
)
# A phrase opening with a pronoun or a measure names nothing the table can show
# ("these concentrations"; "The number of loan defaults" is an outcome).
UNRESOLVED_WORDS = wordset("this these those that it they such its their")
MEASURE_HEAD_WORDS = wordset("number risk rate incidence proportion odds level levels")

# --- follow-up queries (research.pipeline.planner.dimension_terms) ----------------------

# The words a follow-up query adds for a subquestion's dimension; the evidence and
# implementation words come from the question's register (see
# :func:`research.pipeline.planner.dimension_terms`).
DIMENSION_TERMS = {
    "counter-evidence": "limitations",
    "mechanism": "mechanism",
    "definition": "definition",
    "comparison": "compared with",
    "temporal": "recent",
    "provenance": "original study",
}


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


def hedges(text: str) -> list[str]:
    return sorted({m.group(1).lower() for m in _HEDGE_RE.finditer(text)})
