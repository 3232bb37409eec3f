"""Study-design cues: the words by which a source says what kind of study it reports, on whom.

:mod:`research.pipeline.claims.design` reads a source's design and population with these
(its rules: a title cue beats a text cue, the strongest design first), and
:mod:`research.pipeline.claims.scope` reads the designs a researcher names in a plan's
scope with the ``*_NAMED`` pattern texts.
"""

from __future__ import annotations

import re

# --- a design, as a source states it (claims.design._RULES, strongest design first) -----

# Meta-analyses and pooled analyses of trials, studies or cohorts; individual patient data.
META_ANALYSIS_CUE = re.compile(
    r"\b(meta-?analy\w+|meta analy\w+|pooled analysis of (?:\d+ )?(?:randomi[sz]ed|"
    r"trials|studies|cohorts)|individual (?:patient|participant) data analysis)\b",
    re.I,
)
# Systematic (literature) reviews and Cochrane reviews.
SYSTEMATIC_REVIEW_CUE = re.compile(
    r"\b(systematic(?:ally)? (?:literature )?review\w*|cochrane review)\b", re.I
)
# Guidelines, consensus and position statements, practice parameters.
GUIDELINE_CUE = re.compile(
    r"\b(guidelines?|recommendation statement|consensus statement|position "
    r"(?:statement|paper)|practice parameter|clinical practice recommendations?)\b",
    re.I,
)
# Randomized trials: randomly assigned, placebo-controlled, double-blind, "RCT".
RCT_CUE = re.compile(
    r"\b(randomi[sz]ed(?:,)? (?:\w+[- ]?){0,4}(?:trial|study)|randomly (?:assigned|"
    r"allocated)|placebo[- ]controlled|double[- ]blind\w*|randomi[sz]ed controlled|"
    r"\bRCTs?\b)",
    re.I,
)
# Case-control studies: cases and (matched) controls.
CASE_CONTROL_CUE = re.compile(
    r"\b(case[- ]control|cases and (?:matched )?controls|matched controls)\b", re.I
)
# Cohorts: prospective or longitudinal studies, years of follow-up.
COHORT_CUE = re.compile(
    r"\b(cohort|prospective(?:ly)? (?:study|studies|follow|data|analysis|observational)|"
    r"longitudinal (?:study|analysis|data)|followed (?:up )?for \d|years? of follow-?up)\b",
    re.I,
)
# Cross-sectional studies: prevalence studies and national surveys.
CROSS_SECTIONAL_CUE = re.compile(
    r"\b(cross[- ]sectional|prevalence (?:study|survey)|national survey)\b", re.I
)
# Case reports and series: "we report a case", "a 54-year-old woman".
CASE_REPORT_CUE = re.compile(
    r"\b(case reports?|case series|we (?:report|describe|present) (?:a|an|the|two|"
    r"three) (?:case|patient)|a \d{1,3}-year-old (?:man|woman|male|female|patient|"
    r"boy|girl))\b",
    re.I,
)
# Narrative reviews: reviews, overviews, recent advances, perspectives, primers.
NARRATIVE_REVIEW_CUE = re.compile(
    r"(\breview\b|\boverview\b|\brecent advances\b|\bcurrent (?:concepts|knowledge|"
    r"understanding)\b|\bperspective\b|\bprimer\b|\bstate of the art\b)",
    re.I,
)
# A review the text itself is ("in this review", "here we review", "we summarize the"): a
# review cue in a text's own sentences counts only then.
OWN_REVIEW_CUE = re.compile(
    r"\b(this|the present|in this|we) (?:review|overview)\b|\bhere,? we review\b|"
    r"\bwe (?:summari[sz]e|review|discuss) (?:the |recent |current )",
    re.I,
)

# --- on what, on whom ---------------------------------------------------------------------

# Animals a study was done on (and knockout or transgenic models).
ANIMAL_SUBJECTS = re.compile(
    r"\b(mice|mouse|murine|rats?|rodents?|zebrafish|drosophila|c\. elegans|caenorhabditis|"
    r"xenopus|yeast|primates?|macaques?|monkeys?|pigs?|piglets?|dogs?|canine|rabbits?|sheep|"
    r"ovine|bovine|cattle|chickens?|hamsters?|guinea pigs?|knockout|transgenic)\b",
    re.I,
)
# Cells a study was done on: cell lines and cultures, organoids, explants.
IN_VITRO_SUBJECTS = re.compile(
    r"\b(in vitro|cell lines?|cultured (?:cells|neurons)|cell cultures?|hela|hek ?293|"
    r"organoids?|fibroblasts|explants?|recombinant (?:protein|enzyme))\b",
    re.I,
)
# People a study was done on: patients, participants, adults, residents.
HUMAN_SUBJECTS = re.compile(
    r"\b(patients?|participants?|subjects|volunteers|women|men|adults?|children|infants|"
    r"adolescents|persons|people|individuals|residents|respondents|veterans|population|"
    r"elderly|outpatients|inpatients)\b",
    re.I,
)
# Ages as stated: "aged 20-40 y", "65 years or older", "over 60", "mean age, 66 years".
STATED_AGE_RANGE = re.compile(
    r"\b(?:aged|ages?|age range(?: of)?|between)\s*(?P<a>\d{1,3})\s*(?:-|–|to|and)\s*"
    r"(?P<b>\d{1,3})\s*(?:y\b|yr|years?|yo)",
    re.I,
)
STATED_AGE_MIN = re.compile(
    r"\b(?:aged|ages?|age)?\s*(?:(?:≥|>=|>)\s*(?P<a>\d{1,3})\s*(?:y\b|yr|years?)|(?P<b>\d{1,3})\s*"
    r"(?:y\b|yr|years?)(?: of age)?(?: (?:or|and) (?:older|over|above|more))|(?:over|older than|"
    r"above|at least)\s*(?P<c>\d{1,3})\s*(?:y\b|yr|years?))",
    re.I,
)
STATED_AGE_MEAN = re.compile(
    r"\b(?:mean|median|average) age(?: was| of|,|:)?\s*(?P<a>\d{1,3}(?:\.\d)?)\s*"
    r"(?:y\b|yr|years?)?",
    re.I,
)
# A group of people with its qualifiers: words of age or health, or any hyphenated
# compound ("low-income", "school-age", "treatment-naive"): "healthy young adults".
PEOPLE_GROUP = re.compile(
    r"\b((?:[a-z]+-[a-z]+ |healthy |pregnant |older |elderly |young |younger )*(?:adults|"
    r"women|men|children|infants|adolescents|elderly (?:people|persons|patients)|"
    r"older (?:people|persons|patients)|patients with [\w' -]{3,40}?|residents|newborns|"
    r"neonates))\b",
    re.I,
)

# --- whose study: the document's own, or one it cites -----------------------------------

# The document speaking of its own study: "we", "our", "this study", "were randomly
# assigned".
OWN_STUDY_CUE = re.compile(
    r"\b(we|our|this|these|the present|the current|here|herein)\b|"
    r"\b(?:were|was) (?:randomly|randomi[sz]ed|enrolled|recruited|followed|assigned)",
    re.I,
)
# "A randomized trial of 400 adults …" describes the document's own study; "A meta-analysis
# published in 2007 showed …" cites someone else's.
INDEFINITE_OPENER = re.compile(r"^(?:in )?(?:a|an)\s", re.I)
CITED_STUDY_CUE = re.compile(
    r"\b(published|previous(?:ly)?|prior|earlier|recent(?:ly)?|several|many|other|existing|"
    r"a number of|has been|have been|had been)\b",
    re.I,
)

# --- a design, as a plan's scope names it (claims.scope) --------------------------------
# Pattern texts: the scope matches each as a whole word (``\b(?:…)\b``, any case) and strips
# it from the clause before reading its settings.

META_ANALYSIS_NAMED = r"meta-?analy\w*|meta analy\w*"
SYSTEMATIC_REVIEW_NAMED = r"systematic reviews?"
RCT_NAMED = r"randomi[sz]ed(?: controlled| clinical)? trials?|rcts?|randomi[sz]ed studies"
COHORT_NAMED = r"cohort(?: studies| study)?|prospective studies|longitudinal studies"
CASE_CONTROL_NAMED = r"case[- ]control(?: studies| study)?"
CROSS_SECTIONAL_NAMED = r"cross[- ]sectional(?: studies| study| surveys?)?"
CASE_REPORT_NAMED = r"case reports?|case series"
NARRATIVE_REVIEW_NAMED = r"narrative reviews?|(?<!systematic )reviews"
GUIDELINE_NAMED = r"guidelines?"
ANIMAL_NAMED = r"animal (?:studies|studies|models?|experiments?)|animal"
IN_VITRO_NAMED = r"in vitro(?: studies)?|cell studies"
