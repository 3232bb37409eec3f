"""The report's answer sections as document records: bottom line, evidence table,
counter-evidence and disagreement, gaps — and the check that every number the bottom
line prints is traceable to approved capsules.

Built with the rest of the frozen document (``reports.exports.document.build_document``)
from the synthesis (``research.pipeline.answer``) and the ledger as it stood. Only
reported (approved) claims are named by text; any other claim by its Appendix A label
and why it is out. A quote is its source's own words, shown as stored when it is its
snapshot's text at its offsets (``source_quote``), even where a withheld claim was mined
from the same sentence; free text (reasons, notes) is redacted against every withheld
wording, like every free text of the document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from reports.exports.citations import source_title
from reports.exports.facts import (
    APPROVE,
    CONTRADICTS,
    POSSIBLE_CONTRADICTION,
    ClaimFacts,
    ContestedFacts,
    GapFacts,
    GapWording,
    LinkFacts,
    SourceFacts,
)
from reports.exports.records import (
    AnswerSection,
    AnswerSentenceRow,
    BottomLineRow,
    ClaimRow,
    ContestedRow,
    ContradictionRow,
    CounterSection,
    CountRow,
    ExcludedRow,
    GapRow,
    OverrideRow,
    PlanSubquestionRow,
    ReportDocument,
    SourceRow,
)
from reports.exports.withheld import WithheldMatcher
from research.pipeline.answer import Answer, AnswerSentence, BottomLine
from research.pipeline.claims.design import DESIGN_LABELS
from research.pipeline.claims.facets import Facets, facets
from research.pipeline.language.lexicon import (
    MEASURE_HEAD_WORDS,
    PHRASE_CLAUSE_WORDS,
    PHRASE_FUNCTION_WORDS,
    UNRESOLVED_WORDS,
)
from research.pipeline.verify.restate import plain, reporting_frame

CONTRARY = {
    CONTRADICTS: "credible contradiction",
    POSSIBLE_CONTRADICTION: "possible contradiction",
}


# --- bottom line ------------------------------------------------------------------------


@dataclass(frozen=True)
class Numbering:
    """Claim labels (code -> C1) and bibliography numbers (source key -> 1)."""

    labels: dict[str, str]
    sources: dict[str, int]
    claim_sources: dict[str, list[int]]  # claim code -> the numbers of the sources it cites

    def citations(self, codes: Iterable[str]) -> list[int]:
        return sorted({n for code in codes for n in self.claim_sources.get(code, [])})


def answer_section(answer: Answer | None, numbering: Numbering) -> AnswerSection:
    if answer is None:
        return AnswerSection()
    return AnswerSection(
        question=_bottom_line(answer.question, numbering),
        subquestions=[_bottom_line(line, numbering) for line in answer.subquestions],
        rule=answer.rule,
    )


def _bottom_line(line: BottomLine, numbering: Numbering) -> BottomLineRow:
    return BottomLineRow(
        key=line.key,
        title=line.title,
        consensus=line.consensus,
        weight_for=line.weight_for,
        weight_against=line.weight_against,
        sentences=[_sentence(s, numbering) for s in line.sentences],
    )


def _sentence(sentence: AnswerSentence, numbering: Numbering) -> AnswerSentenceRow:
    return AnswerSentenceRow(
        text=sentence.text,
        claims=[numbering.labels[code] for code in sentence.claims],
        claim_codes=list(sentence.claims),
        citations=numbering.citations(sentence.claims),
        counts=[
            CountRow(
                value=count.value,
                what=count.what,
                unit=count.unit,
                claims=[numbering.labels[code] for code in count.claims],
                sources=sorted(numbering.sources[key] for key in count.sources),
            )
            for count in sentence.counts
        ],
    )


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_EDGES = "\"'“”‘’()[]{},;:.!?"


def _tokens(text: str) -> list[str]:
    return [w for w in (word.strip(_EDGES).casefold() for word in text.split()) if w]


@dataclass(frozen=True)
class Names:
    """The terms the question, the plan and the sources' titles name ("COVID-19",
    "Django 4.2", "type 2"): a number inside one of them is part of a name, not a
    count, wherever the bottom line repeats the name."""

    words: frozenset[str]  # words with a digit and a letter: COVID-19, H1N1, ISO-9001
    pairs: frozenset[tuple[str, str]]  # a word and the number after it: (django, 4.2)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Names:
        words: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        for text in texts:
            found = _tokens(text)
            words.update(w for w in found if _has_digit(w) and not w.replace(".", "").isdigit())
            pairs.update(zip(found, found[1:], strict=False))
        return cls(frozenset(words), frozenset(pairs))

    def named(self, text: str, match: re.Match[str]) -> bool:
        """Whether the number ``match`` found in ``text`` is part of a named term."""
        before = text[: match.start()].split()
        after = text[match.end() :].split()
        # The whole word holding the number: "COVID-19," holds 19.
        head = before[-1] if before and not text[match.start() - 1].isspace() else ""
        tail = after[0] if after and not text[match.end() :][:1].isspace() else ""
        word = (head + match.group() + tail).strip(_EDGES).casefold()
        if word != match.group() and word in self.words:
            return True
        previous = before[-1].strip(_EDGES).casefold() if before and not head else ""
        return (previous, match.group()) in self.pairs


def _has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


def document_names(doc: ReportDocument) -> Names:
    """What the question, scope, plan, bottom-line titles and source titles name."""
    plan = doc.appendix_d
    lines = [doc.answer.question] if doc.answer.question else []
    return Names.of(
        [
            doc.header.title,
            plan.question,
            plan.scope,
            *(row.text for row in plan.subquestions),
            *(line.title for line in [*lines, *doc.answer.subquestions]),
            *(entry.title for entry in doc.bibliography),
        ]
    )


def untraceable_numbers(doc: ReportDocument) -> list[str]:
    """Numbers of the bottom line that are neither a count backed by the capsules it
    lists nor stated in an approved claim the sentence cites nor part of a term the
    question, plan or a source's title names (empty when all trace)."""
    claims = {c.label: c for c in doc.claims}
    cited_by: dict[str, set[int]] = {}
    for row in doc.appendix_b:
        cited_by.setdefault(row.claim, set()).add(row.source)
    names = document_names(doc)
    problems = []
    lines = [doc.answer.question] if doc.answer.question else []
    for line in [*lines, *doc.answer.subquestions]:
        for sentence in line.sentences:
            problems += _sentence_problems(sentence, claims, cited_by, names)
    return problems


def _sentence_problems(
    sentence: AnswerSentenceRow,
    claims: dict[str, ClaimRow],
    cited_by: dict[str, set[int]],
    names: Names,
) -> list[str]:
    problems = []
    stated = {n for label in sentence.claims for n in _NUMBER.findall(claims[label].text)}
    counted = {str(count.value) for count in sentence.counts}
    for match in _NUMBER.finditer(sentence.text):
        number = match.group()
        if number not in counted | stated and not names.named(sentence.text, match):
            problems.append(f"“{sentence.text}”: {number} is neither counted nor stated")
    for count in sentence.counts:
        backing = count.sources if count.unit == "sources" else count.claims
        unknown = [label for label in count.claims if label not in claims]
        sources = {n for label in count.claims for n in cited_by.get(label, set())}
        if count.value != len(set(backing)) or unknown or not set(count.sources) <= sources:
            problems.append(
                f"“{sentence.text}”: the count {count.value} ({count.what}) "
                f"does not match its claims {count.claims} and sources {count.sources}"
            )
    return problems


# --- evidence table ---------------------------------------------------------------------


@dataclass
class _SourceFacts:
    source: SourceFacts
    number: int
    claims: list[ClaimFacts]


def design_words(design: str) -> str:
    return DESIGN_LABELS.get(design, design)


def source_design(source: SourceFacts) -> str:
    profile = source.profile  # absent until mining profiled the source
    return profile.design if profile is not None else ""


def studied_population(source: SourceFacts) -> str:
    """Who the source studied, for the evidence table: only a study of people has one (its
    profile states a design and that it studied people); in any other source a population
    word ("adults", "children") is a passing mention, not who was studied."""
    profile = source.profile
    if profile is None or not profile.design or profile.humans is not True:
        return ""
    return str(profile.population)


def source_year(source: SourceFacts) -> str:
    if source.published_date:
        return str(source.published_date.year)
    profile = source.profile
    return str(profile.year) if profile is not None and profile.year else ""


def evidence_table(
    claims: Sequence[ClaimFacts], cited: dict[str, list[SourceFacts]], numbering: Numbering
) -> list[SourceRow]:
    """One row per cited source, in bibliography order: what it is, what its approved
    claims state (facets read from the approved wording, never guessed)."""
    by_number: dict[int, _SourceFacts] = {}
    for claim in claims:
        for source in cited.get(claim.code, []):
            number = numbering.sources[source.canonical_id]
            entry = by_number.setdefault(number, _SourceFacts(source, number, []))
            if claim not in entry.claims:
                entry.claims.append(claim)
    return [_source_row(entry, numbering) for _, entry in sorted(by_number.items())]


# A cell holds at most this many phrases (the claims themselves are in the register).
CELL_PHRASES = 3


def _joined(values: Iterable[str], limit: int = CELL_PHRASES) -> str:
    kept = list(dict.fromkeys(v for v in values if v))
    more = f" (+{len(kept) - limit} more)" if len(kept) > limit else ""
    return "; ".join(kept[:limit]) + more


def noun_phrase(phrase: str, *, intervention: bool = False) -> str:
    """A facet as a table cell may show it: trimmed of dangling function words, or
    empty when it is not a clean noun phrase (the claim in the register says it all)."""
    words = phrase.split()
    while words and (
        words[-1].lower().strip(",;:") in PHRASE_FUNCTION_WORDS
        or (words[-1].lower().endswith("ly") and len(words[-1]) > 4)  # "… significantly"
    ):
        words.pop()
    while words and words[0].lower() in ("with", "to", "on", "of"):
        words.pop(0)
    lowered = [w.lower().strip(",;:()") for w in words]
    if not words or lowered[0] in UNRESOLVED_WORDS or PHRASE_CLAUSE_WORDS & set(lowered):
        return ""
    if len(lowered) > 1 and lowered[0].endswith("ed") and lowered[1] in PHRASE_FUNCTION_WORDS:
        return ""  # "reached with the recommended intakes": a verb phrase, not a noun
    if intervention and (lowered[0] in ("in", "among") or lowered[-1] in MEASURE_HEAD_WORDS):
        return ""  # who was studied, or what was measured: not the intervention
    if (
        intervention
        and len(lowered) > 1
        and lowered[0] == "the"
        and lowered[1] in MEASURE_HEAD_WORDS
    ):
        return ""
    return " ".join(words)


def finding_cell(label: str, parts: Facets, labelled: bool) -> str:
    """The table's "Finding: direction, effect" for one claim. A direction is shown only
    beside an outcome the table can name: "increases" under an outcome of "—" ("an increase
    in the recommended intake is warranted") tells a reader nothing true."""
    direction = parts.direction if noun_phrase(parts.outcome) else ""
    said = ", ".join(p for p in (direction, parts.effect) if p)
    if not said:
        return ""
    return f"{label}: {said}" if labelled else said


def stated_wording(claim: ClaimFacts) -> str:
    """What a reported claim states, for its facets: a reporting frame a reviewer added
    when narrowing ("The source states that …") is set aside, as re-verification sets it
    aside (:func:`research.pipeline.verify.restate.reporting_frame`). Reads the claim's
    decisions as loaded with it."""
    decisions = claim.decisions  # oldest first
    if not decisions or decisions[0].text_before == claim.text:
        return claim.text
    frame, clause = reporting_frame(plain(decisions[0].text_before), plain(claim.text))
    return clause if frame else claim.text


def _source_row(entry: _SourceFacts, numbering: Numbering) -> SourceRow:
    parts = [(numbering.labels[c.code], facets(stated_wording(c))) for c in entry.claims]
    # Who the source studied (a study's own text), else who its approved claims name.
    population = studied_population(entry.source) or _joined(
        noun_phrase(p.population) for _, p in parts
    )
    labelled = len(parts) > 1
    return SourceRow(
        number=entry.number,
        title=source_title(entry.source),
        year=source_year(entry.source),
        design=design_words(source_design(entry.source)),
        population=population,
        intervention=_joined(noun_phrase(p.intervention, intervention=True) for _, p in parts),
        outcome=_joined(noun_phrase(p.outcome) for _, p in parts),
        direction=_joined(
            (finding_cell(label, p, labelled) for label, p in parts), limit=len(parts)
        ),
        effect=_joined((p.effect for _, p in parts), limit=len(parts)),
        claims=[label for label, _ in parts],
    )


# --- counter-evidence and disagreement --------------------------------------------------


def counter_section(
    contested: Sequence[ContestedFacts],
    claims: Sequence[ClaimFacts],
    numbering: Numbering,
    excluded: Sequence[ExcludedRow],
    redactor: WithheldMatcher,
) -> CounterSection:
    return CounterSection(
        contested=contested_rows(contested, numbering, excluded, redactor),
        contradictions=contradiction_rows(claims, numbering, redactor),
        overrides=[row for c in claims if (row := override_row(c, numbering, redactor))],
    )


def contested_rows(
    contested: Sequence[ContestedFacts],
    numbering: Numbering,
    excluded: Sequence[ExcludedRow],
    redactor: WithheldMatcher,
) -> list[ContestedRow]:
    """Contested pairs with at least one reported side; the reported side first."""
    outside = {row.code: row for row in excluded}
    rows = []
    for pair in contested:
        sides = [(pair.claim_code, pair.claim_text), (pair.other_code, pair.other_text)]
        sides.sort(key=lambda side: side[0] not in numbering.labels)
        (first, first_text), (second, second_text) = sides
        if first not in numbering.labels:
            continue  # neither side is in the report: nothing it may print
        reported = second in numbering.labels
        out = outside.get(second)
        rows.append(
            ContestedRow(
                first=numbering.labels[first],
                first_text=first_text,
                second=numbering.labels[second] if reported else (out.label if out else "?"),
                second_text=second_text if reported else "",
                second_state="" if reported else _out_state(out),
                reason=redactor.redact(pair.reason),
            )
        )
    return rows


def source_quote(link: LinkFacts, redactor: WithheldMatcher) -> str:
    """A link's quote as stored when its snapshot says it at its offsets: the source's own
    words are evidence, not a claim's wording, even when a rejected or unreviewed claim was
    mined from that very sentence. A quote its snapshot does not hold is not a source's
    words, so it is redacted like any free text."""
    if link.snapshot.text[link.quote_start : link.quote_end] == link.quote:
        return link.quote
    return redactor.redact(link.quote)


def _out_state(row: ExcludedRow | None) -> str:
    if row is None:
        return "not in this report"
    return f"{row.review_state}, verdict {row.status.upper()}; see Appendix A"


def contradiction_rows(
    claims: Sequence[ClaimFacts], numbering: Numbering, redactor: WithheldMatcher
) -> list[ContradictionRow]:
    """Quotes the verifiers found contradicting a reported claim, one per quoted span."""
    rows = []
    for claim in claims:
        seen: set[tuple[int, int, int]] = set()
        links = sorted(
            (link for link in claim.evidence if link.relation in CONTRARY),
            key=lambda link: (link.relation != CONTRADICTS, -(link.score or 0.0), link.pk),
        )
        for link in links:
            span = (link.snapshot_pk, link.quote_start, link.quote_end)
            if span in seen:
                continue
            seen.add(span)
            source = link.snapshot.source
            number = numbering.sources.get(source.canonical_id)
            rows.append(
                ContradictionRow(
                    claim=numbering.labels[claim.code],
                    quote=source_quote(link, redactor),
                    source=f"[{number}]" if number else redactor.redact(source_title(source)),
                    relation=link.relation,
                    strength=CONTRARY[link.relation] + _judged_by(link),
                )
            )
    return rows


def _judged_by(link: LinkFacts) -> str:
    """Who judged the passage contradicting, strongest first: " (rules 0.75, learned 0.53)",
    from the counted votes; the link's own score ranks retrieval, not contradiction."""
    votes = sorted(
        (v for v in link.votes if v.valid and not v.shadow and v.verdict == CONTRADICTS),
        key=lambda v: (-(v.score or 0.0), v.family),
    )
    said = ", ".join(
        f"{v.family} {v.score:.2f}" if v.score is not None else v.family for v in votes
    )
    return f" ({said})" if said else ""


def override_row(
    claim: ClaimFacts, numbering: Numbering, redactor: WithheldMatcher
) -> OverrideRow | None:
    """The standing approval, when it overrode the verifiers' verdict."""
    last = claim.decisions[-1] if claim.decisions else None
    if last is None or last.action != APPROVE or not last.override:
        return None
    return OverrideRow(
        claim=numbering.labels[claim.code],
        verdict=(last.verdict_at_decision or claim.status).upper(),
        reviewer=last.reviewer,
        reason=redactor.redact(last.reason),
        contrary=[
            source_quote(link, redactor) for link in claim.evidence if link.relation in CONTRARY
        ],
    )


# --- gaps ---------------------------------------------------------------------------------

# What kind of evidence would answer a subquestion, by the planner's dimension, in the
# words of the question's field (research.pipeline.planner.Register).
WOULD_ANSWER = {
    "evidence": "{designs} or a meta-analysis that report {outcome} with {subject}{population}",
    "counter-evidence": (
        "{studies} or meta-analyses reporting no effect, or harm, of {subject} on "
        "{outcome}{population}"
    ),
    "mechanism": "studies of how {subject} could act on {outcome}",
    "definition": "a guideline or review that defines {subject} and {outcome}{population}",
    "implementation": "{studies} that state {variant_nouns} of {subject} they tested",
    "comparison": "{studies} comparing {subject} with {compared_with} for {outcome}",
    "temporal": "recent {studies} or updated meta-analyses of {subject} and {outcome}",
    "provenance": "the original {origins} behind the main findings on {subject} and {outcome}",
}


@dataclass(frozen=True)
class GapInputs:
    question: str
    scope: str
    library_only: bool  # no web or scholarly adapter searched
    dimensions: dict[str, str]  # subquestion key -> dimension
    claims_by_sub: dict[str, list[ClaimFacts]]  # every claim of the run, by subquestion key
    wording: GapWording  # the planner's reading of the question (reports.inputs.gap_wording)
    # subquestion key -> the subquestions where findings it found are claims (a
    # proposition found under several is filed under one: the others point to it)
    filed_under: dict[str, list[str]] = field(default_factory=dict)


def gap_rows(
    subquestions: Sequence[PlanSubquestionRow],
    reported: set[str],
    inputs: GapInputs,
    gaps: dict[str, GapFacts],
) -> list[GapRow]:
    """Every plan subquestion the report cannot answer from approved evidence, with what
    was searched and what would answer it."""
    rows = []
    for sub in subquestions:
        claims = inputs.claims_by_sub.get(sub.key, [])
        if sub.enabled and any(c.code in reported for c in claims):
            continue
        searched = [q.text for q in sub.queries if q.enabled] if sub.enabled else []
        rows.append(
            GapRow(
                key=sub.key,
                title=sub.text,
                state=_gap_state(
                    sub.enabled, claims, gaps.get(sub.key), inputs.filed_under.get(sub.key, [])
                ),
                searched=searched,
                found=_gap_found(
                    sub.enabled, claims, gaps.get(sub.key), inputs.filed_under.get(sub.key, [])
                ),
                would_answer=would_answer(inputs, sub.key),
            )
        )
    return rows


def _gap_state(
    enabled: bool, claims: list[ClaimFacts], gap: GapFacts | None, elsewhere: list[str]
) -> str:
    if not enabled:
        return "disabled in the plan: not searched"
    if not claims and elsewhere:
        return "what it found is filed under another subquestion"
    if gap is not None or not claims:
        return "no relevant finding in what was searched"
    return "findings were mined, but none was approved"


def _gap_found(
    enabled: bool, claims: list[ClaimFacts], gap: GapFacts | None, elsewhere: list[str]
) -> str:
    if not enabled:
        return "—"
    parts = []
    if elsewhere:
        parts.append(
            f"{len(elsewhere)} finding(s) found here filed under "
            + ", ".join(dict.fromkeys(elsewhere))
        )
    if gap is not None:
        parts.append(
            f"{gap.passages} passages read, {gap.candidates} sentences considered"
            + (
                f", best relevance {gap.best_relevance:.2f}"
                if gap.best_relevance is not None
                else ""
            )
        )
    if claims:
        states: dict[str, int] = {}
        for claim in claims:
            key = _claim_state(claim)
            states[key] = states.get(key, 0) + 1
        parts.append(
            f"{len(claims)} claim(s) mined: " + ", ".join(f"{n} {k}" for k, n in states.items())
        )
    return "; ".join(parts) or "no claim mined"


def _claim_state(claim: ClaimFacts) -> str:
    if claim.review_state == "rejected":
        return "rejected"
    if claim.review_state == "unreviewed":
        return f"not reviewed ({claim.status.upper()})"
    return claim.review_state


def would_answer(inputs: GapInputs, key: str) -> str:
    shape = r = inputs.wording
    subject = shape.subject or "the question's subject"
    outcome = shape.outcome or "its outcome"
    population = f" in {shape.population}" if shape.population else ""
    template = WOULD_ANSWER.get(inputs.dimensions.get(key, ""), "sources that address it directly")
    text = template.format(
        subject=subject,
        outcome=outcome,
        population=population,
        studies=r.studies,
        designs=r.designs,
        variant_nouns=r.variant_nouns,
        compared_with=shape.other or r.compared_with,
        origins=r.origins,
    )
    return text[0].upper() + text[1:] + "."


def gaps_note(inputs: GapInputs) -> str:
    """What holds for every gap, said once under the table: the scope the evidence must
    fit, and where to look that was not searched."""
    parts = []
    if inputs.scope:
        parts.append(f"Evidence that would answer a gap must fit the plan's scope: {inputs.scope}")
    if inputs.library_only:
        parts.append(
            "Only the plan's library was searched: adding such sources to it, or enabling a "
            "scholarly search adapter, is the way to close these gaps"
        )
    return "".join(p.rstrip(".") + ". " for p in parts).strip()
