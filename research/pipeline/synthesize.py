"""Report synthesis from approved claim capsules, with a post-synthesis check.

The stage's input is a list of :class:`Capsule` records and nothing else: it never sees
the database, so an unapproved claim cannot reach the prose by construction. Two passes:

1. ``outline``: group the capsules by subquestion (plan order), order them inside a
   section deterministically (confidence, then text) and label them C1, C2, ….
2. prose: the offline default is extractive — each capsule's approved text, qualified by
   its allowed scope, with numbered citations to the sources of its quotes. With a chat
   model, an LLM writes each section; its output is re-atomized into sentences and each
   sentence must map to approved claims of that section (``check_sentence``; compound
   sentences are split into atomic propositions with the claim miner's
   ``split_coordination``, and each must come from one cited claim). Failing
   sentences are removed; a section whose sentences mostly fail falls back to the
   extractive form. Every removal and fallback is returned as a :class:`Finding`.

Citation numbers are assigned here (by first use) and always computed from the cited
capsules' evidence, never taken from model output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from research.pipeline.answer import Answer, SourceFacts, answer
from research.pipeline.answer import Finding as AnswerFinding
from research.pipeline.claims.mine import split_coordination
from research.pipeline.language.lexicon import (
    BRIDGE_WORDS,
    BROADENING_WORDS,
    SYNTHESIS_HEDGES,
    SYNTHESIS_STOPWORDS,
    stem_words,
)
from research.pipeline.language.sentences import split_sentences
from research.pipeline.report_check import Hypothesis, Premise, ReportCheck
from research.providers.base import ProviderError

EXTRACTIVE = "extractive"

# A section whose LLM sentences fail more often than this falls back to extractive prose.
MAX_FAILED_SHARE = 0.5

WRITER_SYSTEM_PROMPT = (
    "You write one section of an audited research report. You may use ONLY the approved "
    "claims given to you. Rules: every sentence must end with the tags of the claims it "
    "states, like [C1] or [C1, C3]; do not add facts, numbers, causes, comparisons or "
    "generalizations that the tagged claims do not state; keep every hedge (may, can, "
    "suggests) and stay within each claim's allowed scope; never use a prohibited "
    "overstatement. Write plain prose, no headings, no lists."
)
WRITER_USER_TEMPLATE = "Section: {title}\n\nApproved claims:\n{claims}\n\nWrite the section."


class ChatModel(Protocol):
    """What the writer needs from an LLM client (``research.providers.llm.LLMClient``)."""

    @property
    def label(self) -> str: ...

    def chat(self, messages: list[dict[str, str]], *, json_mode: bool = False) -> str: ...


@dataclass(frozen=True)
class CapsuleEvidence:
    """One approved supporting quote of a capsule, bound to a snapshot."""

    source_key: str  # the source's canonical id; citations are numbered per source
    quote: str
    quote_start: int
    quote_end: int
    snapshot_sha256: str
    passage_fingerprint: str
    cluster: str = ""  # the source's independence cluster ("" = its own)
    design: str = ""  # the source's study design as its text states it ("" = not stated)
    studied: str = ""  # who or what the source studied: its title and stated population
    snapshot_code: str = ""
    # The evidence links that quote this span (ids, in passage order): a chunk and its
    # parent section often quote the same span (the report's Appendix B lists them all).
    link_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Capsule:
    """An approved claim and what a report may say on its strength: its approved wording,
    limits and cited quotes, and the approval behind it. The one reader that builds them
    from the ledger is ``review.services.capsules.approved_capsules``."""

    code: str
    text: str
    fingerprint: str
    subquestion_key: str = ""
    subquestion_text: str = ""
    subquestion_position: int = 0
    allowed_scope: str = ""
    prohibited_overstatements: tuple[str, ...] = ()
    limitations: str = ""
    confidence: float | None = None
    claim_type: str = ""
    evidence: tuple[CapsuleEvidence, ...] = ()
    direction: str = ""  # the direction its approved wording states (claims.facets)
    effect: str = ""  # the effect as its approved wording states it
    marked: bool = False  # approved without verified support: printed, marked, not counted
    # The approval that stands (review.models.ReviewDecision):
    status: str = ""  # the verifiers' verdict
    independent_sources: int = 0
    approved_by: str = ""
    approved_at: datetime | None = None
    decision_code: str = ""
    override: bool = False  # approved against the verifiers' verdict (see the reason)
    override_reason: str = ""
    overridden_verdict: str = ""


@dataclass
class OutlineSection:
    key: str
    title: str
    claims: list[str]  # capsule codes in prose order


@dataclass
class Sentence:
    text: str
    claims: list[str]  # capsule codes the sentence states
    citations: list[int] = field(default_factory=list)  # source numbers


@dataclass
class Section:
    key: str
    title: str
    mode: str  # "extractive", "llm" or "llm-fallback"
    sentences: list[Sentence]


@dataclass
class Finding:
    """What the post-synthesis check did, stored with the report."""

    section: str
    action: str  # "removed", "section-fallback", "appended-extractive", "llm-error"
    reason: str
    sentence: str = ""


@dataclass
class Synthesis:
    synthesizer: str
    labels: dict[str, str]  # capsule code -> "C1"
    outline: list[OutlineSection]
    sections: list[Section]
    sources: list[str]  # source keys in citation-number order (number = index + 1)
    findings: list[Finding]
    answer: Answer | None = None  # the bottom line (when the question was given)
    check: ReportCheck | None = None  # the semantic check of every sentence (when run)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class NoCapsulesError(ValueError):
    """Synthesis needs at least one approved capsule with evidence."""


def synthesize(
    capsules: Sequence[Capsule],
    *,
    llm: ChatModel | None = None,
    question: str = "",
    subquestions: Sequence[tuple[str, str]] = (),
    check: Callable[[Sequence[Hypothesis]], ReportCheck] | None = None,
) -> Synthesis:
    """Outline, then prose, then the bottom line (``research.pipeline.answer``) when the
    question is given; ``llm`` None means the deterministic extractive writer. ``check``
    (``research.pipeline.report_check``) judges every sentence against the capsules it
    cites; a sentence it refuses is removed and named in the findings."""
    usable = [c for c in capsules if c.evidence]
    if not usable:
        raise NoCapsulesError("no approved capsule with supporting evidence to synthesize")
    outline_sections = outline(usable)
    by_code = {c.code: c for c in usable}
    labels = {code: f"C{n}" for n, code in enumerate(_codes_in_order(outline_sections), 1)}
    findings: list[Finding] = []
    sections = []
    for part in outline_sections:
        members = [by_code[code] for code in part.claims]
        if llm is None:
            sections.append(Section(part.key, part.title, EXTRACTIVE, extractive(members)))
        else:
            sections.append(_llm_section(part, members, labels, llm, findings))
    checked = None
    if check is not None:
        checked = _semantic_check(outline_sections, sections, by_code, check, findings)
    sources = _number_citations(sections, by_code)
    bottom = answer([as_finding(c) for c in usable], question, subquestions) if question else None
    return Synthesis(
        synthesizer=EXTRACTIVE if llm is None else llm.label,
        labels=labels,
        outline=outline_sections,
        sections=sections,
        sources=sources,
        findings=findings,
        answer=bottom,
        check=checked,
    )


def as_finding(capsule: Capsule) -> AnswerFinding:
    """A capsule as the bottom line reads it: one entry per source it cites."""
    seen: dict[str, SourceFacts] = {}
    for ev in capsule.evidence:
        seen.setdefault(
            ev.source_key, SourceFacts(ev.source_key, ev.cluster, ev.design, ev.studied)
        )
    return AnswerFinding(
        code=capsule.code,
        text=capsule.text,
        subquestion=capsule.subquestion_key,
        direction=capsule.direction,
        effect=capsule.effect,
        confidence=capsule.confidence,
        marked=capsule.marked,
        sources=tuple(seen.values()),
    )


def outline(capsules: Iterable[Capsule]) -> list[OutlineSection]:
    """Pass 1: one section per subquestion in plan order; claims ordered deterministically."""
    groups: dict[tuple[int, str], list[Capsule]] = {}
    titles: dict[str, str] = {}
    for capsule in capsules:
        groups.setdefault((capsule.subquestion_position, capsule.subquestion_key), []).append(
            capsule
        )
        titles.setdefault(capsule.subquestion_key, capsule.subquestion_text)
    sections = []
    for (_, key), members in sorted(groups.items()):
        members.sort(key=lambda c: (-(c.confidence or 0.0), c.text, c.code))
        title = titles[key] or "Findings"
        sections.append(OutlineSection(key=key, title=title, claims=[c.code for c in members]))
    return sections


def extractive(capsules: Iterable[Capsule]) -> list[Sentence]:
    """Each approved text, qualified by its allowed scope when the text does not say it."""
    return [Sentence(text=scoped_text(c), claims=[c.code]) for c in capsules]


def scoped_text(capsule: Capsule) -> str:
    text = capsule.text.strip()
    scope = capsule.allowed_scope.strip().rstrip(".")
    if not scope or scope.lower() in text.lower():
        return text
    return f"{text.rstrip('.')} (scope: {scope})."


def _codes_in_order(sections: list[OutlineSection]) -> list[str]:
    return [code for section in sections for code in section.claims]


def _number_citations(sections: list[Section], by_code: dict[str, Capsule]) -> list[str]:
    """Number sources by first use and set each sentence's citations from its claims."""
    order: list[str] = []
    for section in sections:
        for sentence in section.sentences:
            numbers: list[int] = []
            for code in sentence.claims:
                for ev in by_code[code].evidence:
                    if ev.source_key not in order:
                        order.append(ev.source_key)
                    number = order.index(ev.source_key) + 1
                    if number not in numbers:
                        numbers.append(number)
            sentence.citations = sorted(numbers)
    return order


def _semantic_check(
    outline_sections: list[OutlineSection],
    sections: list[Section],
    by_code: dict[str, Capsule],
    check: Callable[[Sequence[Hypothesis]], ReportCheck],
    findings: list[Finding],
) -> ReportCheck:
    """Judge every sentence; remove the refused ones (each a "refused" finding), then
    state what an LLM section no longer covers extractively, and judge those too."""
    result = check(_hypotheses(sections, by_code))
    refused = {(s.section, s.text) for s in result.refused}
    for item in result.refused:
        findings.append(Finding(item.section, "refused", item.reason, item.text))
    members_of = {part.key: part.claims for part in outline_sections}
    appended: list[Section] = []
    for section in sections:
        section.sentences = [s for s in section.sentences if (section.key, s.text) not in refused]
        if section.mode != EXTRACTIVE:
            before = len(section.sentences)
            members = [by_code[code] for code in members_of[section.key]]
            _append_uncovered(section.key, members, section.sentences, findings)
            added = section.sentences[before:]
            if added:
                appended.append(Section(section.key, section.title, section.mode, added))
            if not before:
                section.mode = "llm-fallback"
    if not appended:
        return result
    more = check(_hypotheses(appended, by_code))
    return replace(result, sentences=result.sentences + more.sentences)


def _hypotheses(sections: list[Section], by_code: dict[str, Capsule]) -> list[Hypothesis]:
    return [
        Hypothesis(
            section.key,
            sentence.text,
            tuple(Premise(code, scoped_text(by_code[code])) for code in sentence.claims),
        )
        for section in sections
        for sentence in section.sentences
    ]


# --- LLM writer and the post-synthesis check ------------------------------------------


def _llm_section(
    part: OutlineSection,
    members: list[Capsule],
    labels: dict[str, str],
    llm: ChatModel,
    findings: list[Finding],
) -> Section:
    """Write one section with the LLM, then keep only sentences that pass the check."""
    try:
        prose = llm.chat(writer_messages(part.title, members, labels))
    except ProviderError as exc:
        findings.append(Finding(part.key, "llm-error", str(exc)))
        return Section(part.key, part.title, "llm-fallback", extractive(members))
    by_label = {labels[c.code]: c for c in members}
    kept: list[Sentence] = []
    failed = 0
    units = atomize(prose)
    for text, tags in units:
        problems = check_sentence(text, tags, by_label)
        if problems:
            failed += 1
            findings.append(Finding(part.key, "removed", "; ".join(problems), text))
        else:
            kept.append(Sentence(text=text, claims=[by_label[t].code for t in tags]))
    if not kept or failed > MAX_FAILED_SHARE * max(len(units), 1):
        reason = f"{failed} of {len(units)} sentences failed the check"
        findings.append(Finding(part.key, "section-fallback", reason))
        return Section(part.key, part.title, "llm-fallback", extractive(members))
    _append_uncovered(part.key, members, kept, findings)
    return Section(part.key, part.title, "llm", kept)


def _append_uncovered(
    key: str, members: list[Capsule], kept: list[Sentence], findings: list[Finding]
) -> None:
    covered = {code for sentence in kept for code in sentence.claims}
    for capsule in members:
        if capsule.code not in covered:
            sentence = extractive([capsule])[0]
            kept.append(sentence)
            reason = "approved claim not stated by the LLM prose"
            findings.append(Finding(key, "appended-extractive", reason, sentence.text))


def writer_messages(
    title: str, members: list[Capsule], labels: dict[str, str]
) -> list[dict[str, str]]:
    lines = []
    for capsule in members:
        line = f"[{labels[capsule.code]}] {capsule.text}"
        if capsule.allowed_scope:
            line += f"\n    allowed scope: {capsule.allowed_scope}"
        if capsule.prohibited_overstatements:
            line += "\n    never say: " + "; ".join(capsule.prohibited_overstatements)
        lines.append(line)
    user = WRITER_USER_TEMPLATE.format(title=title, claims="\n".join(lines))
    return [
        {"role": "system", "content": WRITER_SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


_TAG = re.compile(r"\[\s*(C\d+(?:\s*[,;]\s*C\d+)*)\s*\]")


def atomize(prose: str) -> list[tuple[str, list[str]]]:
    """Split prose into sentences and pull out their claim tags (re-atomization)."""
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", prose.strip()):
        flat = " ".join(paragraph.split())
        pieces += [flat[a:b] for a, b in split_sentences(flat)]
    units: list[tuple[str, list[str]]] = []
    for piece in pieces:
        tags = [t.strip() for m in _TAG.finditer(piece) for t in re.split(r"[,;]", m.group(1))]
        text = " ".join(_TAG.sub(" ", piece).split())
        text = re.sub(r"\s+([.,;:!?])", r"\1", text)
        if not re.search(r"\w", text) and units:  # tags alone after a full stop
            units[-1][1].extend(t for t in tags if t not in units[-1][1])
            continue
        units.append((text, list(dict.fromkeys(tags))))
    return [(text, tags) for text, tags in units if re.search(r"\w", text)]


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,]\d+)*%?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in _WORD.findall(text)]


def _stems(text: str) -> set[str]:
    words = [w for w in _words(text) if w and w not in SYNTHESIS_STOPWORDS and not w[0].isdigit()]
    return set(stem_words(words))


def check_sentence(text: str, tags: list[str], by_label: dict[str, Capsule]) -> list[str]:
    """Problems that stop ``text`` from mapping onto its tagged approved claims."""
    if not tags:
        return ["cites no approved claim"]
    unknown = [t for t in tags if t not in by_label]
    if unknown:
        return [f"cites claims not approved for this section: {', '.join(unknown)}"]
    cited = [by_label[t] for t in tags]
    support = " ".join(f"{c.text} {c.allowed_scope}" for c in cited)
    problems = _content_problems(text, support, multiple=len(cited) > 1)
    problems += _scope_problems(text, cited)
    if len(cited) > 1 and not problems:
        problems += _bridge_problems(text, cited)
    return problems


def _bridge_problems(text: str, cited: list[Capsule]) -> list[str]:
    """Each atomic proposition of the sentence must come from ONE cited claim: words
    drawn from two claims into one proposition make a bridge claim nobody verified."""
    problems = []
    for atom in split_coordination(text):
        stems = _stems(atom)
        if not any(stems <= _stems(f"{c.text} {c.allowed_scope}") for c in cited):
            problems.append(f"bridge claim: “{atom}” joins several cited claims into one")
    return problems


def _content_problems(text: str, support: str, *, multiple: bool) -> list[str]:
    problems = []
    words = set(_words(text))
    support_words = set(_words(support))
    bridges = sorted((words & BRIDGE_WORDS) - support_words)
    if multiple and bridges:
        problems.append(f"bridge claim between cited claims ({', '.join(bridges)})")
    broad = sorted((words & BROADENING_WORDS) - support_words)
    if broad:
        problems.append(f"broadened scope ({', '.join(broad)})")
    numbers = set(_NUMBER.findall(text)) - set(_NUMBER.findall(support))
    if numbers:
        problems.append(f"numbers not in the cited claims ({', '.join(sorted(numbers))})")
    extra = sorted(_stems(text) - _stems(support) - _stems(" ".join(bridges + broad)))
    if extra:
        problems.append(f"unsupported content ({', '.join(extra)})")
    return problems


def _scope_problems(text: str, cited: list[Capsule]) -> list[str]:
    problems = []
    lowered = text.lower()
    for capsule in cited:
        for phrase in capsule.prohibited_overstatements:
            if phrase.strip() and phrase.strip().lower() in lowered:
                problems.append(f"prohibited overstatement ({phrase.strip()})")
    hedged = set().union(*(set(_words(c.text)) & SYNTHESIS_HEDGES for c in cited))
    if hedged and not set(_words(text)) & SYNTHESIS_HEDGES:
        problems.append(f"drops the hedge of the cited claim ({', '.join(sorted(hedged))})")
    return problems
