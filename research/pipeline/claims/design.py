"""What kind of study a source reports, and on whom: its design and population.

:func:`profile_source` reads a source's title and the start of its text and returns a
:class:`SourceProfile`: the study design (meta-analysis, systematic review, randomized
controlled trial, cohort, case-control, cross-sectional, case report, narrative review,
guideline, animal, in vitro; empty when no cue says), the cue that decided it, the
participants' ages as stated ("aged 20–40 y", "65 years or older", "mean age 66"), the
population in words, whether it studies people, and the year when the metadata has one.
Rules, in order of how much a design says: a title cue beats a text cue, and an animal or
cell study is recognised by what it was done on, not by a passing mention of mice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research.pipeline.claims.roles import classify_sentence
from research.pipeline.language.design import (
    ANIMAL_SUBJECTS,
    CASE_CONTROL_CUE,
    CASE_REPORT_CUE,
    CITED_STUDY_CUE,
    COHORT_CUE,
    CROSS_SECTIONAL_CUE,
    GUIDELINE_CUE,
    HUMAN_SUBJECTS,
    IN_VITRO_SUBJECTS,
    INDEFINITE_OPENER,
    META_ANALYSIS_CUE,
    NARRATIVE_REVIEW_CUE,
    OWN_REVIEW_CUE,
    OWN_STUDY_CUE,
    PEOPLE_GROUP,
    RCT_CUE,
    STATED_AGE_MEAN,
    STATED_AGE_MIN,
    STATED_AGE_RANGE,
    SYSTEMATIC_REVIEW_CUE,
)
from research.pipeline.language.sentences import split_sentences
from research.pipeline.language.structure import AIM, METHOD, label_spans, strip_label
from research.pipeline.language.structure import DESIGN as DESIGN_ROLE

META_ANALYSIS = "meta-analysis"
SYSTEMATIC_REVIEW = "systematic-review"
RCT = "rct"
COHORT = "cohort"
CASE_CONTROL = "case-control"
CROSS_SECTIONAL = "cross-sectional"
CASE_REPORT = "case-report"
NARRATIVE_REVIEW = "narrative-review"
GUIDELINE = "guideline"
ANIMAL = "animal"
IN_VITRO = "in-vitro"

DESIGN_LABELS = {
    META_ANALYSIS: "meta-analysis",
    SYSTEMATIC_REVIEW: "systematic review",
    RCT: "randomized controlled trial",
    COHORT: "cohort study",
    CASE_CONTROL: "case-control study",
    CROSS_SECTIONAL: "cross-sectional study",
    CASE_REPORT: "case report or series",
    NARRATIVE_REVIEW: "narrative review",
    GUIDELINE: "guideline",
    ANIMAL: "animal study",
    IN_VITRO: "in vitro study",
}
# Strength of the design as evidence about people, strongest first (for ranking).
DESIGN_ORDER = (
    META_ANALYSIS,
    SYSTEMATIC_REVIEW,
    RCT,
    GUIDELINE,
    COHORT,
    CASE_CONTROL,
    CROSS_SECTIONAL,
    CASE_REPORT,
    NARRATIVE_REVIEW,
    ANIMAL,
    IN_VITRO,
)
NON_HUMAN = frozenset({ANIMAL, IN_VITRO})
TEXT_CHARS = 4000  # designs and populations are stated early (abstract, methods summary)

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (META_ANALYSIS, META_ANALYSIS_CUE),
    (SYSTEMATIC_REVIEW, SYSTEMATIC_REVIEW_CUE),
    (GUIDELINE, GUIDELINE_CUE),
    (RCT, RCT_CUE),
    (CASE_CONTROL, CASE_CONTROL_CUE),
    (COHORT, COHORT_CUE),
    (CROSS_SECTIONAL, CROSS_SECTIONAL_CUE),
    (CASE_REPORT, CASE_REPORT_CUE),
    (NARRATIVE_REVIEW, NARRATIVE_REVIEW_CUE),
)


@dataclass(frozen=True)
class SourceProfile:
    """A source's design and population, as its text states them."""

    design: str = ""  # one of DESIGN_LABELS' keys, or "" when no cue says
    design_cue: str = ""  # the words that decided it
    humans: bool | None = None  # None: cannot tell
    age_min: float | None = None
    age_max: float | None = None
    age_text: str = ""  # the age as stated
    population: str = ""  # who was studied, in the source's words
    year: int | None = None

    @property
    def design_label(self) -> str:
        return DESIGN_LABELS.get(self.design, "")


def own_design_text(text: str) -> str:
    """The sentences in which a document describes its own study (not the studies it cites):
    those that speak of "we", "this study", start "A randomized trial…", or state methods,
    design or aims."""
    body = text[:TEXT_CHARS]
    kept = []
    label = ""
    for start, end in split_sentences(body):
        sentence = body[start:end]
        found = label_spans(sentence)
        if found:
            label = found[-1].label
        role = classify_sentence(sentence, label).role
        bare = strip_label(sentence)
        own = OWN_STUDY_CUE.search(bare) or (
            INDEFINITE_OPENER.search(bare) and not CITED_STUDY_CUE.search(bare)
        )
        if own or role in (METHOD, DESIGN_ROLE, AIM):
            kept.append(sentence)
    return " ".join(kept)


def classify_design(title: str, text: str) -> tuple[str, str]:
    """(design, cue): the title decides when it names a design; then the sentences in which
    the text describes its own study."""
    body = text[:TEXT_CHARS]
    own = own_design_text(body)
    non_human = _non_human(title + " " + body)
    for where in (title, own):
        for design, pattern in _RULES:
            match = pattern.search(where)
            if match is None:
                continue
            if design == NARRATIVE_REVIEW and where is own and not _review_in_text(own):
                continue
            if non_human and design in (RCT, COHORT, CASE_CONTROL, CROSS_SECTIONAL):
                return non_human, f"{match.group(0)} (in {non_human.replace('-', ' ')} models)"
            return design, match.group(0)
    if non_human:
        return non_human, "no human participants; " + (
            "cells" if non_human == IN_VITRO else "animals"
        )
    return "", ""


def _review_in_text(body: str) -> bool:
    return bool(OWN_REVIEW_CUE.search(body))


def _non_human(text: str) -> str:
    animal = len(ANIMAL_SUBJECTS.findall(text))
    cells = len(IN_VITRO_SUBJECTS.findall(text))
    human = len(HUMAN_SUBJECTS.findall(text))
    if animal >= 2 and animal > human:
        return ANIMAL
    if cells >= 2 and cells > human and animal == 0:
        return IN_VITRO
    return ""


def ages(text: str) -> tuple[float | None, float | None, str]:
    """The participants' age range as stated (min, max, the words), first statement wins."""
    body = text[:TEXT_CHARS]
    candidates: list[tuple[int, float | None, float | None, str]] = []
    m = STATED_AGE_RANGE.search(body)
    if m:
        a, b = float(m.group("a")), float(m.group("b"))
        if a < b <= 120:
            candidates.append((m.start(), a, b, m.group(0)))
    m = STATED_AGE_MIN.search(body)
    if m:
        value = m.group("a") or m.group("b") or m.group("c")
        if value and float(value) <= 120:
            candidates.append((m.start(), float(value), None, m.group(0).strip()))
    m = STATED_AGE_MEAN.search(body)
    if m and not candidates and float(m.group("a")) <= 120:
        mean = float(m.group("a"))
        candidates.append((m.start(), mean, mean, m.group(0).strip()))
    if not candidates:
        return None, None, ""
    _, low, high, words = min(candidates, key=lambda c: c[0])
    return low, high, words


def population_words(text: str) -> str:
    match = PEOPLE_GROUP.search(text[:TEXT_CHARS])
    return match.group(1).strip() if match else ""


def profile_source(title: str, text: str, year: int | None = None) -> SourceProfile:
    design, cue = classify_design(title, text)
    low, high, age_text = ages(text)
    humans: bool | None
    if design in NON_HUMAN:
        humans = False
    elif HUMAN_SUBJECTS.search(title + " " + text[:TEXT_CHARS]):
        humans = True
    else:
        humans = None
    return SourceProfile(
        design=design,
        design_cue=cue[:120],
        humans=humans,
        age_min=low,
        age_max=high,
        age_text=age_text[:80],
        population=population_words(text)[:120],
        year=year,
    )


def design_rank(design: str) -> int:
    """0 for the strongest design; unknown designs rank after every known one."""
    return DESIGN_ORDER.index(design) if design in DESIGN_ORDER else len(DESIGN_ORDER)
