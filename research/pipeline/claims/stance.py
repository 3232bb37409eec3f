"""What a finding's wording says against the question's direction of effect.

The planner reads an effect question ("Does X reduce Y in Z?") into its subject X, its
outcome Y, its population Z and the direction it asks (reduce: -1, increase: +1,
"affect": 0). A finding's **stance** is read from its own wording only:

* it *bears on* the question when it names every content word of the subject and one of
  the outcome's (a measure word such as "risk" does not count as the outcome);
* then its direction facet (``claims.facets``) decides: the question's direction is
  *for*; no significant effect or no association is *null*; the other direction is
  *opposite*; an association without a direction, or none stated, has no stance ("").

Two readers use it: the bottom line (``research.pipeline.answer``), which counts
approved findings by stance, and the miner (``claims.select``), which files a finding
under a counter-evidence subquestion only when it states a null or opposite stance.
"""

from __future__ import annotations

from dataclasses import dataclass

from research.pipeline.claims.facets import DECREASES, INCREASES, NO_EFFECT, NOT_ASSOCIATED
from research.pipeline.language.direction import direction
from research.pipeline.language.lexicon import MEASURE_WORDS, POPULATION_GENERIC, content_stems
from research.pipeline.planner import analyze_question

FOR = "for"
NULL = "null"
OPPOSITE = "opposite"
STANCES = (FOR, NULL, OPPOSITE)
# The planner's research dimensions the miner files findings by.
EVIDENCE_DIMENSION = "evidence"
COUNTER_DIMENSION = "counter-evidence"


@dataclass(frozen=True)
class Question:
    """What a stance needs of the question (the planner's reading of it)."""

    text: str
    subject: str = ""  # the intervention or exposure
    outcome: str = ""
    asked: int | None = None  # -1 reduce, +1 increase, 0 affect; None: no effect asked
    subject_stems: frozenset[str] = frozenset()
    outcome_stems: frozenset[str] = frozenset()
    population: str = ""  # "patients with heart failure"; "" when none is asked
    # What a finding must name to be about that population: its words less the general
    # ones (text.POPULATION_GENERIC); empty for "older adults" (the scope reads ages).
    population_stems: frozenset[str] = frozenset()


_MEASURE_STEMS = frozenset(content_stems(" ".join(sorted(MEASURE_WORDS))))
_GENERIC_STEMS = frozenset(content_stems(" ".join(sorted(POPULATION_GENERIC))))


def read_question(question: str) -> Question:
    shape = analyze_question(question)
    if shape.kind != "effect":
        return Question(question)
    outcome = content_stems(shape.outcome)
    return Question(
        text=question,
        subject=shape.subject,
        outcome=shape.outcome,
        asked=direction(shape.verb),
        subject_stems=frozenset(content_stems(shape.subject)),
        outcome_stems=frozenset(outcome - _MEASURE_STEMS or outcome),
        population=shape.population,
        population_stems=frozenset(content_stems(shape.population) - _GENERIC_STEMS),
    )


def bears_on(text: str, question: Question) -> bool:
    """The text names the question's intervention and one of its outcomes."""
    if question.asked is None or not question.subject_stems:
        return False
    stems = content_stems(text)
    return question.subject_stems <= stems and bool(question.outcome_stems & stems)


def stance_of(text: str, said: str, question: Question) -> str:
    """for / null / opposite: what ``text``, whose direction facet is ``said``, states
    against the question's direction; "" when it does not bear on the question or states
    no direction."""
    if question.asked is None or not bears_on(text, question):
        return ""
    if said in (NO_EFFECT, NOT_ASSOCIATED):
        return NULL
    if said not in (INCREASES, DECREASES):
        return ""  # an association without a direction, or no direction stated
    if question.asked == 0:
        return FOR
    return FOR if (1 if said == INCREASES else -1) == question.asked else OPPOSITE
