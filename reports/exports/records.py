"""The typed report document: what a report version says, frozen, for every export format.

``ReportDocument`` is built once when a report version is created
(``reports.exports.document.build_document``), stored as JSON in ``Report.outline`` and
parsed back at that boundary (``Report.document``); every renderer (Markdown, HTML, PDF,
bundle, citations) and every check reads these records, never a loose dict.

Extending the report (a new section or table) means: a field with a default here, filled
in ``build_document``, rendered in ``markdown.py`` and ``templates/reports/report_body.html``.
A document of another ``format`` is refused with :class:`UnsupportedDocument`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reports.exports.withheld import REDACTED

FORMAT = "evidence-bureau-report/2"


class UnsupportedDocument(ValueError):
    """A stored document this code cannot read (another format, or malformed)."""


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Header(Record):
    title: str = Field(description="The plan's question.")
    report_version: int
    plan_code: str
    plan_version: int
    plan_version_hash: str
    run_code: str
    run_config_hash: str
    synthesizer: str
    created_by: str
    created_at: str = Field(description="ISO 8601; when the version was built.")


class OutlineEntry(Record):
    key: str
    title: str
    claims: list[str] = Field(description="Claim labels (C1, …) in prose order.")


class SentenceRow(Record):
    text: str
    claims: list[str] = Field(description="Labels of the approved claims it states.")
    claim_codes: list[str]
    citations: list[int] = Field(description="Bibliography numbers of their sources.")


class SectionRow(Record):
    key: str
    title: str
    mode: str = Field(description='"extractive", "llm" or "llm-fallback".')
    sentences: list[SentenceRow]


class ClaimRow(Record):
    """An approved claim the report states (the claim register)."""

    label: str
    code: str
    text: str
    fingerprint: str = Field(description="sha256 of the normalized text.")
    status: str
    review_state: str
    claim_type: str
    subquestion: str
    allowed_scope: str
    limitations: str
    confidence: float | None
    evidence: list[str] = Field(description="Evidence labels (E1, …) in appendix B.")
    override: str = Field(
        default="",
        description="Empty, or how a reviewer approved it against the verifiers' verdict "
        "(verdict, reviewer, written reason).",
    )
    contrary: list[str] = Field(
        default_factory=list,
        description="Quotes that contradict it (credibly or possibly), shown with overrides.",
    )
    unsupported: str = Field(
        default="",
        description="Empty, or why this approved claim is printed without verified support "
        "(the verifiers' verdict; it then cites the sentence it was mined from).",
    )


class SnapshotRef(Record):
    sha256: str
    fetched_at: str


class BibEntry(Record):
    number: int
    key: str
    canonical_id: str
    title: str
    authors: list[str]
    publisher: str
    url: str
    doi: str
    arxiv_id: str
    source_type: str
    published_date: str
    snapshots: list[SnapshotRef]
    reference: str = Field(description="The one-line reference the report prints.")
    year: str = Field(default="", description="Publication year; empty when the metadata lacks it.")
    venue: str = Field(default="", description="Journal, publisher or site; empty when unknown.")
    identifier: str = Field(
        default="", description="How to find it: DOI, arXiv id, URL, or the corpus and document id."
    )


class EvidencePassage(Record):
    """One evidence link behind a cited quote: the passage it was retrieved in."""

    link_id: int = Field(description="The EvidenceLink row: the link's own identity.")
    pool: str
    kind: str = Field(description='"chunk" or "section".')
    passage_start: int
    passage_end: int
    passage_fingerprint: str
    passage_sha256: str


class EvidenceRow(Record):
    """One cited quote of one claim: a snapshot span, with every link that quotes it."""

    label: str
    claim: str
    claim_code: str
    claim_fingerprint: str
    quote: str
    quote_start: int = Field(description="Python string offset in the snapshot text.")
    quote_end: int
    relation: str
    source: int = Field(description="Bibliography number.")
    canonical_id: str
    published_date: str
    snapshot_code: str
    snapshot_sha256: str
    fetched_at: str
    passages: list[EvidencePassage] = Field(min_length=1)


class ExcludedRow(Record):
    """A claim the report does not state; never its text."""

    label: str
    code: str
    fingerprint: str
    subquestion: str
    status: str
    review_state: str
    disposition: str
    reasons: list[str] = Field(description="Redacted against every withheld text.")
    summary: str = Field(
        default="", description="The reasons in one line, verifier internals left out."
    )


class SetAsideRow(Record):
    """A candidate mining dropped before verification; never its wording."""

    label: str
    fingerprint: str
    subquestion: str
    claim_type: str
    reason: str
    canonical_id: str
    snapshot_sha256: str
    quote_start: int | None
    quote_end: int | None


class AuditRow(Record):
    at: str
    reviewer: str
    action: str
    claim: str = Field(description="C… for reported claims, X… for excluded ones.")
    claim_code: str
    claim_version: int
    reason_code: str
    reason: str
    text_changed: bool
    text_after_sha256: str
    carried_from: str = Field(
        default="", description="Code of the earlier run's decision this one carries over."
    )
    override: str = Field(
        default="", description="The verdict an approval overrode (FAIL, …); empty if none."
    )


class PlanQueryRow(Record):
    key: str
    text: str
    query_class: str
    enabled: bool = Field(default=True, description="False: disabled in the plan, not searched.")


class PlanSubquestionRow(Record):
    key: str
    text: str
    queries: list[PlanQueryRow]
    enabled: bool = Field(default=True, description="False: disabled in the plan, not searched.")


def sorted_keys(value: dict[str, Any]) -> dict[str, Any]:
    """Dicts the renderers iterate are kept in key order: the document renders the same
    after a trip through Postgres (jsonb does not keep insertion order)."""
    return dict(sorted(value.items()))


class StageRow(Record):
    stage: str
    round: int
    status: str
    notes: dict[str, Any]
    label: str = Field(default="", description='In words: "Searching (follow-up round 1)".')

    _notes = field_validator("notes")(sorted_keys)


class PlanAppendix(Record):
    question: str
    scope: str
    constraints: dict[str, Any]
    plan_version: int
    plan_version_hash: str
    subquestions: list[PlanSubquestionRow]
    run_code: str
    run_state: str
    run_config: dict[str, Any] = Field(description="The run's pipeline settings, as stored.")
    libraries: dict[str, str] = Field(
        default_factory=dict, description="The configuration's library: code -> name."
    )
    run_config_hash: str
    run_started_at: str
    run_finished_at: str
    stages: list[StageRow]
    method: list[str]


class DiffAppendix(Record):
    against_run: str = ""
    summary: dict[str, int] = Field(default_factory=dict)
    entries: list[str] = Field(default_factory=list)

    _summary = field_validator("summary")(sorted_keys)


class CheckFinding(Record):
    section: str
    action: str
    reason: str


class CheckAppendix(Record):
    synthesizer: str
    findings: list[CheckFinding]


# --- the answer: bottom line, evidence table, counter-evidence, gaps ---------------------


class CountRow(Record):
    """A number the bottom line prints and exactly what it counts."""

    value: int
    what: str = Field(description='What is counted, e.g. "randomized controlled trials".')
    unit: str = Field(description='"claims" or "sources": which list the value counts.')
    claims: list[str] = Field(description="Labels of the approved claims behind the count.")
    sources: list[int] = Field(description="Bibliography numbers of the sources counted.")


class AnswerSentenceRow(Record):
    text: str
    claims: list[str] = Field(description="Labels of the approved claims it rests on.")
    claim_codes: list[str]
    citations: list[int] = Field(description="Bibliography numbers of their sources.")
    counts: list[CountRow] = Field(
        default_factory=list, description="Every count the sentence prints, with its backing."
    )


CONSENSUS_LABELS = {
    "supports": "supports",
    "mixed": "mixed",
    "against": "against",
    "insufficient": "insufficient",
    "not-rated": "not rated",
}


class BottomLineRow(Record):
    """What the approved evidence says on the question (key "") or one subquestion."""

    key: str
    title: str
    consensus: str = Field(description="supports, mixed, against, insufficient or not-rated.")
    weight_for: float = 0.0
    weight_against: float = 0.0
    sentences: list[AnswerSentenceRow] = Field(default_factory=list)

    @property
    def consensus_label(self) -> str:
        return CONSENSUS_LABELS.get(self.consensus, self.consensus)

    @property
    def has_findings(self) -> bool:
        """False when no claim of it was approved (its line only says so)."""
        return any(s.claims or s.counts for s in self.sentences)


class AnswerSection(Record):
    question: BottomLineRow | None = None
    subquestions: list[BottomLineRow] = Field(default_factory=list)
    rule: list[str] = Field(default_factory=list, description="The consensus rule, in words.")
    mode: str = Field(default="extractive", description='"extractive", "llm" or "llm-fallback".')


class SourceRow(Record):
    """One source of the evidence table: what it is and what its approved claims state."""

    number: int = Field(description="Bibliography number.")
    title: str
    year: str = Field(description="Empty when the metadata has none.")
    design: str = Field(description="Study design in words; empty when not stated.")
    population: str
    intervention: str
    outcome: str
    direction: str = Field(
        description='Per approved claim, the direction and effect as stated ("C9: '
        'decreases, by 32 percent"; unlabelled when the source grounds one claim).'
    )
    effect: str = Field(description="Effect sizes as stated (extracted from approved text).")
    claims: list[str] = Field(description="Labels of the approved claims it grounds.")


class ContestedRow(Record):
    """Two claims reporting conflicting findings; an excluded side is named, not quoted."""

    first: str
    first_text: str
    second: str
    second_text: str = Field(description="Empty when that claim is not in the report.")
    second_state: str = Field(default="", description="Why the second is not printed.")
    reason: str


class ContradictionRow(Record):
    """A quote that contradicts a reported claim (redacted against withheld wording)."""

    claim: str
    quote: str
    source: str = Field(description="[n] when the source is cited, else its identifier.")
    relation: str
    strength: str = Field(default="", description="How credible the verifiers found it.")


class OverrideRow(Record):
    claim: str
    verdict: str
    reviewer: str
    reason: str
    contrary: list[str] = Field(default_factory=list)


class CounterSection(Record):
    contested: list[ContestedRow] = Field(default_factory=list)
    contradictions: list[ContradictionRow] = Field(default_factory=list)
    overrides: list[OverrideRow] = Field(default_factory=list)


class GapRow(Record):
    """A subquestion the report cannot answer from approved evidence."""

    key: str
    title: str
    state: str = Field(description="Why it is a gap, in words.")
    searched: list[str] = Field(description="The queries run for it (none when disabled).")
    found: str = Field(description="What the search and mining found, in words.")
    would_answer: str = Field(description="What kind of evidence would answer it.")


class ReportDocument(Record):
    format: str = FORMAT
    header: Header
    outline: list[OutlineEntry]
    sections: list[SectionRow]
    claims: list[ClaimRow]
    bibliography: list[BibEntry]
    appendix_a: list[ExcludedRow]
    appendix_a_set_aside: list[SetAsideRow]
    appendix_b: list[EvidenceRow]
    appendix_c: list[AuditRow]
    appendix_d: PlanAppendix
    appendix_e: DiffAppendix
    check: CheckAppendix
    answer: AnswerSection = Field(default_factory=AnswerSection)
    evidence_table: list[SourceRow] = Field(default_factory=list)
    counter: CounterSection = Field(default_factory=CounterSection)
    gaps: list[GapRow] = Field(default_factory=list)
    gaps_note: str = Field(default="", description="What holds for every gap, said once.")

    def to_json(self) -> dict[str, Any]:
        """What ``Report.outline`` stores."""
        return self.model_dump(mode="json")

    @classmethod
    def from_json(cls, data: Any) -> ReportDocument:
        """Parse a stored document; another format or a malformed one is refused."""
        found = data.get("format") if isinstance(data, dict) else None
        if found != FORMAT:
            raise UnsupportedDocument(
                f"the stored report document has format {found!r}, not {FORMAT!r}: "
                "build a new report version"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise UnsupportedDocument(f"the stored report document is malformed: {exc}") from exc

    @property
    def answered(self) -> bool:
        """Whether the answer sections (bottom line, evidence table, counter-evidence,
        gaps) were built with this document; renderers print none of them otherwise,
        rather than an empty section that would read as "nothing was found"."""
        return self.answer.question is not None

    def cited_claim_codes(self) -> set[str]:
        return {
            code for s in self.sections for sentence in s.sentences for code in sentence.claim_codes
        }

    def approved_strings(self) -> list[str]:
        """What the report may print whatever the review decided about other claims:
        approved texts, scopes and limitations, cited and contradicting quotes (a source's
        own words, never a claim's), source titles, and the
        plan's own words (question, scope, subquestions, queries), and the sentences the
        report writes from those alone (the bottom line's templated counts over the
        question's words, what would answer a gap): "an effect of minimum wage
        increases on …" is the report's wording even where a rejected claim shares
        six words of it."""
        strings = [self.header.title, self.appendix_d.question, self.appendix_d.scope]
        lines = [self.answer.question] if self.answer.question else []
        for line in [*lines, *self.answer.subquestions]:
            strings += [line.title, *(sentence.text for sentence in line.sentences)]
        strings += [gap.would_answer for gap in self.gaps] + [self.gaps_note]
        for claim in self.claims:
            strings += [claim.text, claim.allowed_scope, claim.limitations]
        strings += [row.quote for row in self.appendix_b]
        # Contradicting quotes: a source's own words, shown as stored (answer.source_quote).
        contrary = [row.quote for row in self.counter.contradictions]
        contrary += [q for row in self.counter.overrides for q in row.contrary]
        contrary += [q for claim in self.claims for q in claim.contrary]
        strings += [q for q in contrary if REDACTED not in q]
        strings += [entry.title for entry in self.bibliography]
        for sub in self.appendix_d.subquestions:
            strings += [sub.text, *(query.text for query in sub.queries)]
        return [s for s in strings if s]
