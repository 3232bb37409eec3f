"""The bottom line: what the approved capsules say on the question, and a consensus rating.

A pure step over approved capsules (``research.pipeline.synthesize.Capsule``) and nothing
else, so a rejected or unreviewed claim cannot reach it. Offline and deterministic:

1. **bears on the question** — a capsule's approved text names every content word of
   the question's intervention (the planner's reading of "Does X <verb> Y?", e.g.
   "minimum wage increases") and at least one content word of its outcome other than
   a measure word ("risk", "rate": "defaults or evictions"); the others are context; when
   the question names a specific population ("patients with heart failure"), the finding
   or the title or stated population of a source it cites must name it too, else it is
   indirect evidence: reported, not counted;
2. **stance** (:mod:`research.pipeline.claims.stance`, which the miner also files
   counter-evidence by) — the direction its approved wording states (``direction`` on the
   capsule, read by the claim miner's facets from the approved text): the question's
   direction ("reduce") is *for*; no significant effect is *null*; the opposite
   direction is *opposite*; an association without a direction is not counted;
3. **sources, weighted** — each independent source (an independence cluster counts
   once) has the stances of the capsules it grounds and the weight of its study design
   (:data:`DESIGN_WEIGHTS`); a capsule approved without verified support is not counted;
4. **consensus** — insufficient when the counted weight is under :data:`MIN_WEIGHT` (one
   randomized trial); supports when the weight *for* is at least twice the weight
   against (null + opposite); against when the reverse holds; otherwise mixed. A
   question that asks no direction of effect is not rated.

Every number a sentence prints is a :class:`Count` that lists the capsules and sources
it counts, or appears in the text of a capsule the sentence cites: the report's
traceability check (``reports.exports.answer.untraceable_numbers``) proves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from research.pipeline.claims.design import (
    ANIMAL,
    CASE_CONTROL,
    CASE_REPORT,
    COHORT,
    CROSS_SECTIONAL,
    GUIDELINE,
    IN_VITRO,
    META_ANALYSIS,
    NARRATIVE_REVIEW,
    RCT,
    SYSTEMATIC_REVIEW,
)
from research.pipeline.claims.stance import (
    FOR,
    NULL,
    OPPOSITE,
    STANCES,
    Question,
    bears_on,
    read_question,
    stance_of,
)
from research.pipeline.language.lexicon import content_stems

SUPPORTS = "supports"
MIXED = "mixed"
AGAINST = "against"
INSUFFICIENT = "insufficient"
NOT_RATED = "not-rated"


# (weight, singular, plural) per study design; "" is a design no cue stated.
DESIGN_WEIGHTS: dict[str, tuple[float, str, str]] = {
    META_ANALYSIS: (4.0, "meta-analysis", "meta-analyses"),
    SYSTEMATIC_REVIEW: (4.0, "systematic review", "systematic reviews"),
    RCT: (3.0, "randomized controlled trial", "randomized controlled trials"),
    COHORT: (2.0, "cohort study", "cohort studies"),
    CASE_CONTROL: (1.5, "case-control study", "case-control studies"),
    CROSS_SECTIONAL: (1.0, "cross-sectional study", "cross-sectional studies"),
    GUIDELINE: (1.0, "guideline", "guidelines"),
    NARRATIVE_REVIEW: (0.5, "narrative review", "narrative reviews"),
    CASE_REPORT: (0.5, "case report or series", "case reports or series"),
    "": (0.5, "source of unstated design", "sources of unstated design"),
    ANIMAL: (0.25, "animal study", "animal studies"),
    IN_VITRO: (0.25, "in vitro study", "in vitro studies"),
}
MIN_WEIGHT = DESIGN_WEIGHTS[RCT][0]  # less than one randomized trial: insufficient
MAJORITY = 2.0  # supports / against: one side weighs at least twice the other

# The words a stance is said in, by the question's direction (-1 reduce, +1 increase,
# 0 "affect": any effect is "for").
_PHRASES: dict[int, dict[str, str]] = {
    -1: {FOR: "a reduction", NULL: "no significant effect", OPPOSITE: "an increase"},
    1: {FOR: "an increase", NULL: "no significant effect", OPPOSITE: "a decrease"},
    0: {FOR: "an effect", NULL: "no significant effect", OPPOSITE: "an effect"},
}


@dataclass(frozen=True)
class SourceFacts:
    """What the answer knows of one source a capsule cites."""

    key: str  # canonical id
    cluster: str = ""  # independence cluster ("" = the source is its own)
    design: str = ""
    studied: str = ""  # who or what it studied: its title and stated population


@dataclass(frozen=True)
class Finding:
    """One approved capsule as the answer reads it."""

    code: str
    text: str
    subquestion: str
    direction: str = ""  # as its approved wording states it (facets)
    effect: str = ""  # the effect as stated, a substring of the text
    confidence: float | None = None
    marked: bool = False  # approved without verified support: printed, not counted
    sources: tuple[SourceFacts, ...] = ()


@dataclass(frozen=True)
class Count:
    """A number printed in the bottom line and exactly what it counts."""

    value: int
    what: str
    unit: str  # "claims" or "sources"
    claims: tuple[str, ...]  # capsule codes
    sources: tuple[str, ...]  # source keys (one per independent source when unit=sources)


@dataclass
class AnswerSentence:
    text: str
    claims: list[str]  # capsule codes it rests on (the report cites their sources)
    counts: list[Count] = field(default_factory=list)


@dataclass
class BottomLine:
    key: str  # "" = the question
    title: str
    consensus: str
    weight_for: float = 0.0
    weight_against: float = 0.0
    sentences: list[AnswerSentence] = field(default_factory=list)


@dataclass
class Answer:
    question: BottomLine
    subquestions: list[BottomLine]
    rule: list[str]


def in_population(finding: Finding, question: Question) -> bool:
    """The finding is about the question's population: its text, or the title or stated
    population of a source it cites, names every specific word of it ("heart failure" of
    "patients with heart failure"). True when the question names none."""
    if not question.population_stems:
        return True
    said = content_stems(" ".join([finding.text, *(s.studied for s in finding.sources)]))
    return question.population_stems <= said


def stance(finding: Finding, question: Question) -> str:
    """for / null / opposite against the question's direction; "" when not counted (a
    finding about another population than the question's is not counted either)."""
    said = stated_stance(finding, question)
    return said if in_population(finding, question) else ""


def stated_stance(finding: Finding, question: Question) -> str:
    """What the finding says against the question's direction, whoever it is about."""
    return "" if finding.marked else stance_of(finding.text, finding.direction, question)


# --- independent sources and their weights ------------------------------------------


@dataclass
class _Unit:
    """One independent source (an independence cluster) and what its findings say."""

    key: str
    design: str
    sources: set[str] = field(default_factory=set)
    stances: dict[str, list[str]] = field(default_factory=dict)  # stance -> capsule codes
    effects: dict[str, list[str]] = field(default_factory=dict)  # stance -> effects stated

    @property
    def weight(self) -> float:
        return design_weight(self.design)


def design_weight(design: str) -> float:
    return DESIGN_WEIGHTS.get(design, DESIGN_WEIGHTS[""])[0]


def design_name(design: str, n: int) -> str:
    _, one, many = DESIGN_WEIGHTS.get(design, DESIGN_WEIGHTS[""])
    return one if n == 1 else many


def _stronger(a: str, b: str) -> str:
    return a if design_weight(a) >= design_weight(b) else b


def units(findings: Sequence[Finding], question: Question) -> list[_Unit]:
    """The independent sources behind the counted findings, strongest design first."""
    by_key: dict[str, _Unit] = {}
    for finding in findings:
        said = stance(finding, question)
        if not said:
            continue
        for source in finding.sources:
            key = source.cluster or source.key
            unit = by_key.setdefault(key, _Unit(key, source.design))
            unit.design = _stronger(unit.design, source.design)
            unit.sources.add(source.key)
            codes = unit.stances.setdefault(said, [])
            if finding.code not in codes:
                codes.append(finding.code)
                if finding.effect:
                    unit.effects.setdefault(said, []).append(finding.effect)
    return sorted(by_key.values(), key=lambda u: (-u.weight, u.design, u.key))


def rate(found: list[_Unit], question: Question) -> tuple[str, float, float]:
    """(consensus, weight for, weight against) by the rule in the module docstring."""
    if question.asked is None:
        return NOT_RATED, 0.0, 0.0
    weight_for = sum(u.weight for u in found if FOR in u.stances)
    weight_against = sum(u.weight for u in found if NULL in u.stances or OPPOSITE in u.stances)
    if weight_for + weight_against < MIN_WEIGHT:
        return INSUFFICIENT, weight_for, weight_against
    if weight_for >= MAJORITY * weight_against:
        return SUPPORTS, weight_for, weight_against
    if weight_against >= MAJORITY * weight_for:
        return AGAINST, weight_for, weight_against
    return MIXED, weight_for, weight_against


# --- sentences --------------------------------------------------------------------------


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _claims_count(codes: Sequence[str], what: str) -> Count:
    unique = tuple(dict.fromkeys(codes))
    return Count(len(unique), what, "claims", unique, ())


def _sources_count(found: Sequence[_Unit], what: str, claims: Sequence[str]) -> Count:
    """One source per independent unit (its first source key stands for it)."""
    keys = tuple(sorted(u.sources)[0] for u in found)
    return Count(len(keys), what, "sources", tuple(dict.fromkeys(claims)), keys)


def _source_keys(findings: Sequence[Finding]) -> list[str]:
    return list(dict.fromkeys(s.key for f in findings for s in f.sources))


def _lead(findings: Sequence[Finding], found: list[_Unit], question: Question) -> AnswerSentence:
    codes = [f.code for f in findings]
    counted = [code for u in found for codes_ in u.stances.values() for code in codes_]
    counted = list(dict.fromkeys(counted))
    total = _claims_count(codes, "approved findings")
    if not counted:
        sources = Count(
            len(_source_keys(findings)),
            "sources",
            "sources",
            tuple(codes),
            tuple(_source_keys(findings)),
        )
        found_in = f"from {sources.value} {_plural(sources.value, 'source', 'sources')}"
        effect = f"the effect of {question.subject} on {question.outcome}{_in(question)}"
        if total.value == 1:
            text = f"The one approved finding ({found_in}) does not address {effect}."
            return AnswerSentence(text, [], [sources])
        text = f"None of the {total.value} approved findings ({found_in}) addresses {effect}."
        return AnswerSentence(text, [], [total, sources])
    direct = _claims_count(counted, "approved findings on the question")
    units_count = _sources_count(found, "independent sources", counted)
    text = (
        f"{direct.value} of the {total.value} approved findings, from {units_count.value} "
        f"independent {_plural(units_count.value, 'source', 'sources')}, state an effect of "
        f"{question.subject} on {question.outcome}{_in(question)}."
    )
    return AnswerSentence(text, counted, [direct, total, units_count])


def _in(question: Question) -> str:
    """ " in patients with heart failure" when the answer checks the population."""
    return f" in {question.population}" if question.population_stems else ""


def _elsewhere(findings: Sequence[Finding], question: Question) -> AnswerSentence | None:
    """The findings that state an effect on the question, but for another population."""
    other = [
        f.code for f in findings if stated_stance(f, question) and not in_population(f, question)
    ]
    if not other:
        return None
    count = _claims_count(other, "approved findings about another population")
    verb = _plural(count.value, "states", "state")
    text = (
        f"{count.value} approved {_plural(count.value, 'finding', 'findings')} {verb} an "
        f"effect of {question.subject} on {question.outcome}, but not in "
        f"{question.population} (neither {_plural(count.value, 'it', 'they')} nor "
        f"{_plural(count.value, 'its source names', 'their sources name')} it): indirect "
        "evidence, not counted."
    )
    return AnswerSentence(text, other, [count])


def _unit_codes(members: Sequence[_Unit], said: str | None = None) -> list[str]:
    """The capsule codes of these units (with this stance, or any)."""
    stances = [said] if said else list(STANCES)
    return [code for u in members for s in stances for code in u.stances.get(s, [])]


def _design_clause(
    design: str, group: list[_Unit], phrases: dict[str, str]
) -> tuple[str, list[Count], list[str]]:
    """One design's sources and what they found: "2 randomized controlled trials found a
    reduction", or, when they differ, "3 randomized controlled trials: 2 found a reduction
    (by 43 percent), 1 no significant effect" — sources counted, each finding once."""
    total = _sources_count(group, design_name(design, 2), _unit_codes(group))
    said = [s for s in STANCES if any(s in u.stances for u in group)]
    parts: list[str] = []
    counts: list[Count] = []
    for n, stance_ in enumerate(said):
        members = [u for u in group if stance_ in u.stances]
        codes = _unit_codes(members, stance_)
        part = _sources_count(
            members, f"{design_name(design, 2)} that found {phrases[stance_]}", codes
        )
        effects = [e for u in members for e in u.effects.get(stance_, [])]
        effect = f" ({'; '.join(dict.fromkeys(effects))})" if len(members) == 1 and effects else ""
        verb = "found " if n == 0 else ""
        parts.append(f"{part.value} {verb}{phrases[stance_]}{effect}")
        counts.append(part)
    name = design_name(design, total.value)
    codes = list(dict.fromkeys(code for c in counts for code in c.claims))
    if len(said) == 1:  # "2 randomized controlled trials found a reduction"
        return f"{total.value} {name} {parts[0].split(' ', 1)[1]}", [total], codes
    both = sum(c.value for c in counts) > total.value
    note = " (one source can report both, for different outcomes or groups)" if both else ""
    return f"{total.value} {name}: {', '.join(parts)}{note}", [total, *counts], codes


def _design_sentence(found: list[_Unit], question: Question) -> AnswerSentence | None:
    """ "1 meta-analysis found no significant effect; 3 randomized controlled trials: 2
    found a reduction, 1 an increase" — independent sources counted per design."""
    phrases = _PHRASES[question.asked if question.asked is not None else 0]
    parts = [
        _design_clause(design, [u for u in found if u.design == design], phrases)
        for design in dict.fromkeys(u.design for u in found)
    ]
    if not parts:
        return None
    text = "; ".join(clause for clause, _, _ in parts) + "."
    counts = [count for _, cs, _ in parts for count in cs]
    claims = list(dict.fromkeys(code for _, _, codes in parts for code in codes))
    return AnswerSentence(text[0].upper() + text[1:], claims, counts)


def _uncounted(findings: Sequence[Finding], question: Question) -> AnswerSentence | None:
    marked = [f.code for f in findings if f.marked and bears_on(f.text, question)]
    if not marked:
        return None
    count = _claims_count(marked, "findings approved without verified support")
    verb = _plural(count.value, "is", "are")
    text = (
        f"{count.value} further approved {_plural(count.value, 'finding', 'findings')} on the "
        f"question {verb} not counted: approved without verified support."
    )
    return AnswerSentence(text, marked, [count])


def _top_finding(findings: Sequence[Finding], question: Question) -> AnswerSentence:
    """The finding to quote when none was counted: verified first, then one that names the
    question's intervention and outcome (even for another population), then confidence."""
    top = max(
        findings,
        key=lambda f: (
            not f.marked,
            question.asked is not None and bears_on(f.text, question),
            f.confidence or 0.0,
            -len(f.text),
        ),
    )
    if top.marked:  # nothing approved here was verified: no "most confident" to speak of
        said = (
            "No approved finding here was verified; "
            "one a reviewer approved without verified support"
        )
    else:
        said = "The approved finding the verifiers were most confident in"
    return AnswerSentence(f"{said}: “{top.text.strip()}”", [top.code])


def bottom_line(
    key: str, title: str, findings: Sequence[Finding], question: Question
) -> BottomLine:
    """The consensus and the sentences for one subquestion, or the question (key "")."""
    if not findings:
        return BottomLine(
            key,
            title,
            INSUFFICIENT if question.asked is not None else NOT_RATED,
            sentences=[AnswerSentence("No claim was approved.", [])],
        )
    found = units(findings, question)
    consensus, weight_for, weight_against = rate(found, question)
    sentences = [_lead(findings, found, question)] if question.asked is not None else []
    design = _design_sentence(found, question)
    if design is not None:
        sentences.append(design)
    elsewhere = _elsewhere(findings, question)
    if elsewhere is not None:
        sentences.append(elsewhere)
    uncounted = _uncounted(findings, question)
    if uncounted is not None:
        sentences.append(uncounted)
    if design is None:
        sentences.append(_top_finding(findings, question))
    return BottomLine(key, title, consensus, weight_for, weight_against, sentences)


def answer(
    findings: Sequence[Finding],
    question: str,
    subquestions: Sequence[tuple[str, str]],
) -> Answer:
    """The question's bottom line and one per subquestion (``(key, text)``, plan order)."""
    shape = read_question(question)
    lines = [
        bottom_line(key, text, [f for f in findings if f.subquestion == key], shape)
        for key, text in subquestions
    ]
    return Answer(bottom_line("", question, findings, shape), lines, consensus_rule(shape))


def consensus_rule(question: Question) -> list[str]:
    """The rule, in words, for the report's method section."""
    if question.asked is None:
        return [
            "Consensus is not rated: the question asks for no direction of effect, so the "
            "bottom line summarizes the approved findings without weighing them."
        ]
    weights = ", ".join(
        f"{one} {weight:g}"
        for _, (weight, one, _) in sorted(DESIGN_WEIGHTS.items(), key=lambda kv: -kv[1][0])
    )
    return [
        "Bottom line and consensus are computed offline from approved claims only. A "
        f"finding bears on the question when its approved text names every content word of "
        f"the intervention (“{question.subject}”) and at least one of the outcome "
        f"(“{question.outcome}”); the others are reported as context and not counted."
        + (
            f" It counts only when it, or the title or stated population of a source it "
            f"cites, also names the question's population (“{question.population}”); a "
            "finding about another population is indirect evidence, reported and not counted."
            if question.population_stems
            else ""
        ),
        "Its direction is read from the approved wording: the question's direction counts "
        "for; no significant effect, or the opposite direction, counts against; an "
        "association without a direction is not counted, nor is a claim approved without "
        "verified support.",
        "Each independent source counts once (sources in one independence cluster count as "
        f"one), weighted by its study design: {weights}.",
        "Consensus: insufficient when the counted weight is below one randomized "
        "controlled trial's; supports when the weight for is at least twice the weight "
        "against; against when the weight against is at least twice the weight for; "
        "otherwise mixed.",
    ]
