"""Claim cues: the patterns and word lists by which a finding's wording is read.

One section per reader in :mod:`research.pipeline.claims`: a claim's type, entities and time
sensitivity (``classify``), a finding's parts (``facets``), the atomizer's reporting frames
and verbs (``mine``), a question's outcomes (``outcome``) and a plan's scope (``scope``).
Study-design cues are :mod:`research.pipeline.language.design`.
"""

from __future__ import annotations

import re

from research.pipeline.language.direction import DOWN_WORDS, UP_WORDS
from research.pipeline.language.lexicon import MEASURE_WORDS, STOPWORDS
from research.pipeline.language.quantities import VERSION

# --- a claim's type (claims.classify; the first matching type wins, in this order) ---------

# Advice: "should", "is recommended", "best practice", "must be avoided".
RECOMMENDATION_CUE = re.compile(
    r"\b(should|ought to|recommend\w*|is advised|are advised|best practice|"
    r"must be (?:used|avoided|given)|is preferred)\b",
    re.I,
)
# The present state of things: "currently", "as of", "state of the art", "still".
CURRENT_STATE_CUE = re.compile(
    r"\b(currently|current|now|nowadays|today|as of|at present|presently|latest|"
    r"state[- ]of[- ]the[- ]art|recent(?:ly)?|this year|still)\b",
    re.I,
)
# A comparison: "than", "compared with", "versus", "outperforms", "better".
COMPARATIVE_CUE = re.compile(
    r"\b(than|compared (?:with|to)|versus|vs\.?|outperform\w*|superior|inferior|"
    r"better|worse|relative to|in contrast to)\b",
    re.I,
)
# Cause and effect: "causes", "leads to", "due to", "prevents", "protects".
CAUSAL_CUE = re.compile(
    r"\b(caus\w*|leads? to|led to|results? in|resulted in|induc\w*|due to|because|"
    r"prevent\w*|triggers?|drives?|responsible for|contributes? to|promot\w*|"
    r"inhibit\w*|protects?|confers?)\b",
    re.I,
)
# History: "was first introduced", "first described", "in the 19th century".
HISTORICAL_CUE = re.compile(
    r"\b(was (?:first |originally )?(?:introduced|proposed|invented|discovered|founded|"
    r"developed|described|published)|were (?:first )?(?:introduced|discovered)|"
    r"first (?:described|reported|proposed)|in the (?:\d{2}th|\w+teenth) century)\b",
    re.I,
)
# A time: "in 1998", "since 2010", "between 2005 …".
TEMPORAL_CUE = re.compile(
    r"\b(in|since|until|before|after|between|during|by) (1[6-9]\d\d|20\d\d)\b", re.I
)
# A definition: "is defined as", "refers to", "is a kind of", "consists of".
DEFINITIONAL_CUE = re.compile(
    r"\b(is defined as|refers? to|is a (?:type|kind|class|form|family) of|"
    r"is known as|are known as|means|denotes|consists? of|is an? \w+ (?:that|which))\b",
    re.I,
)
# A mechanism: "by binding", "via", "pathway", "phosphorylates", "interacts with".
MECHANISTIC_CUE = re.compile(
    r"\b(by (?:\w+ing)|through|via|mechanism\w*|pathway\w*|binds?|bound|activat\w*|"
    r"phosphorylat\w*|regulat\w*|mediat\w*|encod\w*|works by|interacts? with|"
    r"signal\w*)\b",
    re.I,
)
# Things that change fast (prices, rankings, versions, office holders): a numerical,
# comparative or empirical claim about them is fast-changing.
FAST_CHANGING_CUE = re.compile(
    r"\b(price\w*|pricing|cost\w*|leaderboard|rank\w*|version|release\w*|api|model|"
    r"market|share|users|subscribers|ceo|president|record)\b",
    re.I,
)

# --- named things (claims.classify.entities) -----------------------------------------------

# Lower-case particles inside a multi-word name ("Ludwig van Beethoven", "Bank of England").
NAME_CONNECTORS = frozenset({"of", "de", "van", "von", "der", "la"})
# Capitalised words that open a sentence: never a name on their own.
SENTENCE_STARTERS = frozenset(
    [
        "The",
        "This",
        "These",
        "That",
        "Those",
        "A",
        "An",
        "In",
        "On",
        "At",
        "For",
        "From",
        "By",
        "With",
        "We",
        "Our",
        "It",
        "Its",
        "Here",
        "However",
    ]
)

# --- a finding's parts (claims.facets) -----------------------------------------------------

# An association stated: "was (not) independently associated with", "correlated to",
# "predicts".
ASSOCIATION_PHRASE = re.compile(
    r"\b(?:(?:was|were|is|are|be|been|being) )?(?:not |inversely |positively |negatively |"
    r"independently |significantly |strongly |weakly )*(?:associated|correlated|linked) "
    r"(?:with|to)\b|\bpredict(?:s|ed)?\b",
    re.I,
)
# An association denied: "not associated", "no correlation", "neither … related".
NEGATED_ASSOCIATION = re.compile(
    r"\b(?:not|no|nor|neither)\s+(?:\w+\s+)?(?:associat|correlat|linked|related|predict)", re.I
)
# A negated verb, what is denied in the word after it: "did not reduce", "could not be
# reached", "is not soluble in", "no longer supports". Whether it is an effect denied
# or a property is the word's business (``facets.effect_word``).
NEGATED_VERB = re.compile(
    r"\b(?:(?:did|does|do|could|can|may|might|would|will|was|were|is|are|has|have|had)"
    r"\s+not|never|no longer)\s+(?:(?:significantly|substantially|materially|be|been|"
    r"further)\s+)*(?P<verb>[^\W\d_][\w-]*)",
    re.I,
)
# A stated null result: "had no significant effect on", "there was no difference in".
NULL_RESULT_PHRASE = re.compile(
    r"\b(?:had|has|have|showed|shows|there (?:was|were|is|are))\s+no\s+(?:significant\s+|"
    r"statistically significant\s+|clear\s+|measurable\s+)?(?:effect|influence|impact|"
    r"difference|change|association|benefit)\s+(?:on|in|of|with|between)?",
    re.I,
)
# Where a finding's outcome ends: a qualifier ("by 41%", "compared with", "in older women",
# "p < 0.05") or punctuation.
OUTCOME_END = re.compile(
    r"\s+(?:by|compared|relative|than|versus|vs\.?|among|in (?:a|an)\b|in (?:the )?(?:\d|patients|"
    r"women|men|adults|children|participants|subjects|people|persons|mice|rats)|"
    r"at|over|during|after|within|from|when|while|whereas|although|but|"
    r"(?:p|P)\s*[<=>])\b|\s*[,;:(\[]"
)
# Who a finding is about: "in 3,270 older women", "among patients with heart failure".
POPULATION_PHRASE = re.compile(
    r"\b(?:in|among|of|for)\s+(?P<who>(?:(?:a|an|the|\d[\d,]*|all|healthy|older|younger|"
    r"elderly|young|adult|pregnant|obese|male|female|white|black|[a-z]+-[a-z]+|[A-Z][a-z]+)"
    r"\s+){0,5}(?:patients|"
    r"women|men|adults|children|infants|adolescents|participants|subjects|people|persons|"
    r"individuals|residents|volunteers|mice|rats|animals|cells|users|firms|households|"
    r"companies|students|workers|countries)(?:\s+(?:with|aged|over|older than|who)\s+"
    r"[^,;.()]{1,60})?)",
    re.I,
)
# "In a randomized trial of 3,270 women, X reduced Y": the lead-in is not the intervention.
STUDY_LEAD_IN = re.compile(
    r"^(?:(?:in|among|for|from|across|after|during|over|using|with) (?:[^,]|,(?=\d)){3,160},\s*)+",
    re.I,
)
# A confidence interval stays with the figure it qualifies: "odds ratio 0.88, 95% confidence
# interval 0.81 to 0.96" is one effect, and its "95%" is not a second one.
_INTERVAL = (
    r"(?:[,;]?\s*(?:90|95|99)\s*%\s*(?:confidence interval|CI)[,:\s]*"
    r"-?\d+(?:\.\d+)?\s*(?:to|-|–)\s*-?\d+(?:\.\d+)?)?"
)
# An effect size as stated: a percentage, a ratio (OR, HR, RR …) with its interval, a p
# value, an n-fold change.
EFFECT_FIGURE = re.compile(
    r"(?:\bby\s+)?\d+(?:\.\d+)?\s*(?:%|percent\b|per cent\b)"
    r"(?!\s*(?:confidence|credible|CI\b))(?:\s*\([^)]{0,80}\))?|"
    r"\b(?:OR|RR|HR|IRR|odds ratio|hazard ratio|relative risk|risk ratio|rate ratio)"
    r"[,:=\s]*(?:(?:of|was|were|is)\s+)?\d+(?:\.\d+)?(?:\s*[\(\[][^)\]]{0,80}[\)\]])?"
    + _INTERVAL
    + "|"
    r"\b[Pp]\s*[<=≤]\s*0?\.\d+|\b\d+(?:\.\d+)?[- ]fold\b",
)
# Direction words that are comparatives or nouns ("higher", "loss"): they do not split a
# finding into intervention and outcome at its effect verb.
NON_VERB_DIRECTION_WORDS = (
    "higher",
    "lower",
    "greater",
    "more",
    "less",
    "fewer",
    "loss",
    "gain",
    "gains",
)

# --- a finding's wording (claims.mine) -----------------------------------------------------

# A reporting frame before the finding itself, dropped from the claim: "Here, we show that",
# "In conclusion, these results demonstrate that", "Moreover,".
REPORTING_FRAME = re.compile(
    r"^(?:(?:here,?|in this (?:study|paper|work),?|overall,?|together,?|collectively,?|"
    r"importantly,?|notably,?|moreover,?|furthermore,?|in addition,?|additionally,?|"
    r"finally,?|thus,?|therefore,?|however,?|in summary,?|in conclusion,?)\s+)*"
    r"(?:(?:we|our (?:results|data|findings)|these (?:results|data|findings)|this study|"
    r"the (?:results|data|study))\s+(?:also\s+)?"
    r"(?:show|showed|shows|demonstrate|demonstrated|demonstrates|find|found|report|"
    r"reported|reveal|revealed|reveals|observe|observed|establish|established|confirm|"
    r"confirmed|identify|identified)\s+that\s+)?",
    re.IGNORECASE,
)
# "This interaction was confirmed…": the demonstrative points outside the sentence; the
# claim says "The interaction…" (the anchor quote keeps the source's words).
LEADING_DEMONSTRATIVE = re.compile(r"^(?:This|These|That|Those)\s+(?=[a-z])")
# Auxiliary and linking verbs: a clause's verb when no other is known.
AUXILIARY_VERBS = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "can",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "will",
        "would",
        "does",
        "do",
        "did",
        "remains",
        "remain",
        "seems",
        "seem",
        "appears",
        "appear",
    ]
)
# Past forms that do not end in -ed (one list: the verbs and the predicate splitter's
# same-form check both read it).
IRREGULAR_PAST_VERBS = frozenset(
    [
        "became",
        "made",
        "gave",
        "took",
        "showed",
        "shown",
        "led",
        "began",
        "rose",
        "fell",
        "grew",
        "remained",
        "emerged",
    ]
)
# Verbs common in findings (with the irregular past forms): where a clause's predicate
# starts, so that "X reduces A and improves B" splits into two claims.
COMMON_VERBS = (
    frozenset(
        [
            "combines",
            "combine",
            "uses",
            "use",
            "requires",
            "require",
            "shows",
            "show",
            "causes",
            "cause",
            "contains",
            "contain",
            "includes",
            "include",
            "provides",
            "provide",
            "depends",
            "depend",
            "affects",
            "affect",
            "produces",
            "produce",
            "binds",
            "bind",
            "encodes",
            "encode",
            "regulates",
            "regulate",
            "mediates",
            "mediate",
            "enables",
            "enable",
            "allows",
            "allow",
            "supports",
            "support",
            "outperforms",
            "outperform",
            "achieves",
            "achieve",
            "exhibits",
            "exhibit",
            "remains",
            "occurs",
            "occur",
            "leads",
            "lead",
            "results",
            "correlates",
            "correlate",
            "predicts",
            "predict",
            "balances",
            "balance",
            "relieves",
            "relieve",
            "treats",
            "treat",
            "improves",
            "improve",
            "reduces",
            "reduce",
            "lowers",
            "lower",
            "raises",
            "raise",
            "prevents",
            "prevent",
            "protects",
            "protect",
            "drives",
            "drive",
            "become",
            "becomes",
            "makes",
            "gives",
            "takes",
            "performed",
            "performs",
            "played",
            "plays",
        ]
    )
    | IRREGULAR_PAST_VERBS
)

# --- a question's outcomes (claims.outcome) ------------------------------------------------

# What separates an outcome's alternatives: "employment or hours", "A, B and C", "A/B".
OUTCOME_ALTERNATIVES_SPLIT = re.compile(
    r",\s*(?:and\s+|or\s+)?|\s+(?:and/or|or|and|nor)\s+|\s*/\s*"
)
# A leading determiner or possessive: "the rate", "their hours".
LEADING_DETERMINER = re.compile(r"^(?:the|a|an|any|their|its|his|her|our)\s+", re.IGNORECASE)
# What a sentence reports a measure of: "the incidence of colorectal cancer", "rates of
# default among …" (``what``: up to four words, up to a preposition, verb or punctuation).
MEASURE_OF_PHRASE = re.compile(
    r"\b(?:" + "|".join(sorted(MEASURE_WORDS, key=len, reverse=True)) + r")\s+(?:of|for)\s+"
    r"(?P<what>(?:[\w'-]+\s+){0,3}?[\w'-]+?)(?=\s+(?:in|among|of|for|with|by|at|compared|"
    r"than|and|or|was|were|is|are|after|during|from|to)\b|[,.;:()]|$)",
    re.IGNORECASE,
)
# Words that never name an outcome themselves: function words and measure words.
OUTCOME_STOPWORDS = frozenset({*STOPWORDS, *MEASURE_WORDS})
# Measure and direction words never name an outcome in a candidate sentence, however close
# their embedding: "prices rose" reports a direction, not an outcome.
NOT_OUTCOME_WORDS = frozenset({*OUTCOME_STOPWORDS, *UP_WORDS, *DOWN_WORDS})
# Words of an effect phrase that name a relation, not what it is on.
RELATION_NOUNS = frozenset(
    [
        "association",
        "associations",
        "effect",
        "effects",
        "difference",
        "differences",
        "change",
        "changes",
        "relationship",
        "relationships",
        "link",
        "links",
        "impact",
        "impacts",
        "benefit",
        "benefits",
        "role",
    ]
)

# --- a plan's scope (claims.scope) ---------------------------------------------------------

# A clause that requires what it names: "only", "must", "restricted to", "limited to".
SCOPE_REQUIRED_CUE = re.compile(
    r"\b(only|exclusively|must|required|restricted to|limit(?:ed)? to)\b", re.I
)
# A clause that excludes what it names: "exclude", "no", "not", "except", "without".
SCOPE_EXCLUDED_CUE = re.compile(r"\b(exclud\w*|no|not|except|without|avoid|omit)\b", re.I)
# The youngest age a scope asks for: "over 60", "aged 65+", "60 years or older".
SCOPE_AGE_MIN = re.compile(
    r"\b(?:over|above|older than|at least|aged?|≥|>=|>)\s*(\d{1,3})\s*(?:\+|years?|y\b|yrs?)?"
    r"(?:\s*(?:and|or)\s*(?:over|older|above))?|\b(\d{1,3})\s*(?:\+|years? (?:and|or) "
    r"(?:older|over|above))",
    re.I,
)
# The oldest age a scope asks for: "under 18", "younger than 65".
SCOPE_AGE_MAX = re.compile(r"\b(?:under|below|younger than|less than|<|≤|<=)\s*(\d{1,3})\b", re.I)
# An age range: "aged 18–65", "18 to 65 years".
SCOPE_AGE_RANGE = re.compile(
    r"\b(?:aged?\s*)?(\d{1,3})\s*(?:-|–|to)\s*(\d{1,3})\s*(?:years?|y\b)?", re.I
)
# The first year a scope asks for: "since 2010", "published after 2012".
SCOPE_YEAR_FROM = re.compile(
    r"\b(?:since|after|from|published after|newer than|>=?)\s*((?:19|20)\d\d)\b", re.I
)
# The last year a scope asks for: "before 2000", "up to 2015".
SCOPE_YEAR_TO = re.compile(
    r"\b(?:before|until|up to|prior to|published before|<=?)\s*((?:19|20)\d\d)\b", re.I
)
# A range of years: "2005–2015", "between 2005 and 2015".
SCOPE_YEAR_RANGE = re.compile(r"\b((?:19|20)\d\d)\s*(?:-|–|to|and)\s*((?:19|20)\d\d)\b")
# A first year, open-ended: "2010 onwards", "2010 or later", "2010+".
SCOPE_YEAR_ONWARDS = re.compile(r"\b((?:19|20)\d\d)\s*(?:onwards?|or later|and later|\+)", re.I)
# Years and the words of a year range, stripped from a clause before its settings are read.
SCOPE_YEAR_WORDS = re.compile(r"\b(?:19|20)\d\d\b|\b(?:since|before|after|until|from|onwards?)\b")
# A version range around a version number (research.pipeline.language.quantities.VERSION):
# "3.13 and later", "before 3.13", "up to 3.12", "3.10 to 3.12"; a bare "Django 4.2" is that
# version.
_V = VERSION.pattern
SCOPE_VERSION_RANGE = re.compile(rf"({_V})\s*(?:-|–|to|through)\s*({_V})", re.I)
SCOPE_VERSION_FROM = re.compile(
    rf"(?:\b(?:since|from|after|newer than|at least|>=?)\s*(?:[A-Za-z][\w+-]*\s+){{0,2}}({_V}))"
    rf"|(?:({_V})\s*(?:onwards?|or later|and later|or newer|and newer|or above|and above|\+))",
    re.I,
)
SCOPE_VERSION_TO = re.compile(
    rf"\b(?:before|until|up to|prior to|older than|earlier than|<=?)\s*"
    rf"(?:[A-Za-z][\w+-]*\s+){{0,2}}({_V})",
    re.I,
)
# Words of a version clause that are not the software's name.
VERSION_RANGE_WORDS = re.compile(
    r"\b(?:versions?|releases?|since|from|after|before|until|up|to|through|prior|older|"
    r"newer|earlier|than|at|least|onwards?|or|and|later|above|only|v)\b|[<>=+–-]",
    re.I,
)
# People in words, with an age word before them ("older adults", "young children"); any
# other qualifier ("low-income", "rural") is left to the clause's settings.
SCOPE_PEOPLE = re.compile(
    r"\b((?:(?:older|younger|young|pregnant) )?(?:adults|adolescents|children|"
    r"infants|newborns|neonates|women|men|patients|people|persons|individuals|participants|"
    r"residents)|elderly|seniors|humans?)\b",
    re.I,
)
# People under 18: a scope that names only them is about minors.
CHILD_NOUNS = frozenset({"children", "infants", "newborns", "neonates", "adolescents"})
# The words of a scope clause that are not its setting: cues of requirement, exclusion and
# preference, ages, "studies", "evidence", function words, numbers and comparison signs.
SCOPE_FILLER = re.compile(
    r"\b(no|not|exclud\w*|except|without|avoid|omit|must|required|restricted to|"
    r"limit(?:ed)? to|preferred|prefer(?:ably)?|ideally|favou?r(?:ed)?|only|exclusively|please|"
    r"focus(?:ing)? on|in|of|on|with|and|or|the|a|an|aged?|years?|y|yrs?|over|above|under|"
    r"below|older than|younger than|at least|studies|study|trials?|evidence|data|published)\b|"
    r"[\d+≥≤<>=–]|(?<!\w)-|-(?!\w)",
    re.I,
)
