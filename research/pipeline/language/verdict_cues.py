"""Cue patterns that verification, counter-evidence queries and expansion read in prose.

What the aggregate reads of a claim and its quotes (:data:`SAFETY_TERMS`,
:data:`CORRELATIONAL`, :data:`CAUSAL_EVIDENCE`, :data:`COMPARISON_SPLIT`), the coverage
verifier's forecast cue (:data:`FORECAST`), the negation counter query's cues
(:data:`STATED_NEGATION`, :data:`NEGATABLE_AUXILIARY`) and expansion's qualifying cue
(:data:`QUALIFYING`). Each names the module that reads it. Pure and deterministic.
"""

from __future__ import annotations

import re

# --- the aggregate (research.pipeline.verify.aggregate) ----------------------------------

# A claim about doses, drugs, children, pregnancy, weapons or poisons: a passing verdict on
# it is flagged SAFETY for a reviewer.
SAFETY_TERMS = re.compile(
    r"\b(dose|dosage|overdose|suicid\w*|self-harm|pregnan\w*|vaccin\w*|child(?:ren)?|"
    r"infant\w*|weapon\w*|explosive\w*|poison\w*|lethal|toxic\w*|chemotherap\w*|"
    r"surgery|medication|drug|contraindicat\w*|emergency)\b",
    re.IGNORECASE,
)
# Quotes that report an association; a causal claim they support needs CAUSAL_EVIDENCE too.
CORRELATIONAL = re.compile(
    r"\b(associat\w*|correlat\w*|linked to|link between|related to|relationship|odds ratio|"
    r"risk factor|observational|cohort|cross-sectional)\b",
    re.IGNORECASE,
)
# Quotes that report a cause or an experiment: a causal claim is more than correlation.
CAUSAL_EVIDENCE = re.compile(
    r"\b(caus\w*|led to|leads to|lead to|result(?:s|ed)? in|induc\w*|randomi[sz]ed|trial|"
    r"knock(?:out|down|ed out)|experiment\w*|intervention|mendelian randomi[sz]ation|"
    r"due to|mediat\w*|abolish\w*|rescu\w*)\b",
    re.IGNORECASE,
)
# Where a comparative claim's two sides meet ("A is faster than B"): the evidence must be
# about both.
COMPARISON_SPLIT = re.compile(
    r"\b(?:than|compared (?:with|to)|versus|vs\.?|relative to|in contrast to)\b", re.IGNORECASE
)

# --- the coverage verifier (research.pipeline.verify.coverage) ---------------------------

# A claim about the future ("will reach", "is expected to"): when its latest year lies
# beyond every year its passage names, the passage cannot state it (unverifiable).
FORECAST = re.compile(
    r"\b(will|shall|is expected to|are expected to|forecast\w*|project(?:ed|s))\b"
)

# --- the negation counter query (research.pipeline.counter.negate) -----------------------

# A negation the counter query drops ("X does not reduce Y" -> "X does reduce Y").
STATED_NEGATION = re.compile(r"\b(not|no|never|n't)\b\s*", re.IGNORECASE)
# The auxiliary the counter query puts "not" after, when the claim has no direction word.
NEGATABLE_AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|could|does|do|did|has|have|had|will|would|may|might|should|must)\b"
)

# --- expansion (research.stages.expansion) -----------------------------------------------

# A qualifying cue: a negation, a null result, a limitation or a contrast. A subquestion
# whose relevant passages carry none is one-sided and gets follow-up queries.
QUALIFYING = re.compile(
    r"\b(no|not|never|neither|nor|without|failed|fail|fails|null|non-?significant|"
    r"insignificant|however|although|but|whereas|limited|limitation|limitations|"
    r"inconsistent|conflicting|contrary|controvers\w*|unclear|did not|does not|"
    r"increased risk|adverse)\b",
    re.IGNORECASE,
)
