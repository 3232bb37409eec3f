"""How a sentence sits in its document, read from its form alone: structure labels,
questions, boilerplate and fragments.

These are the rules of :mod:`research.pipeline.claims.roles` that a learned model does not
replace (the model reads what a sentence says; these read where it is and whether it is
whole):

- **Structure labels**: the heading or structured-abstract label a sentence sits under
  ("RESULTS", "Conclusions:", "DESIGN, SETTING, AND PARTICIPANTS", a "## Findings" or
  "Methods" heading line of a report). :func:`label_spans` finds inline labels in a text (so
  a span holding a label can be cut there), :func:`label_role` maps a label to a role, and
  :func:`strip_label` takes a leading one off a sentence.
- **Boilerplate**: funding, registration, copyright, contact lines (:func:`boilerplate`).
- **Aims**: a sentence that says what a study set out to do (:func:`states_aim`), the one
  cue kept beside the learned role model (it measured better than the model on aims).
- **Gaps**: a sentence that says what is not yet known (:func:`states_gap`), kept beside
  the model for the same reason (measured).
- **Fragments**: a lower-case start, unbalanced brackets, a bare effect verb with its
  subject in another sentence, or a conjunction or pronoun pointing outside the sentence
  (:func:`fragment`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research.pipeline.language.direction import EFFECT_VERB_OPPOSITES
from research.pipeline.language.lexicon import is_adverb

# The roles a structure label can give (the names of research.pipeline.claims.roles).
RESULT, CONCLUSION, METHOD, DESIGN, AIM, BACKGROUND, BOILERPLATE = (
    "result",
    "conclusion",
    "method",
    "design",
    "aim",
    "background",
    "boilerplate",
)

_LABEL_WORD = (
    r"BACKGROUNDS?|CONTEXT|INTRODUCTION|RATIONALE|IMPORTANCE|MOTIVATION|OBJECTIVES?|AIMS?|"
    r"PURPOSES?|GOALS?|HYPOTHES[IE]S|QUESTIONS?|METHODS?|METHODOLOGY|MATERIALS?|DESIGNS?|"
    r"SETTINGS?|PARTICIPANTS|PATIENTS|SUBJECTS|POPULATION|INTERVENTIONS?|EXPOSURES?|"
    r"MEASURES?|MEASUREMENTS?|OUTCOMES?|DATA|SOURCES?|STUDY|STUDIES|SELECTION|EXTRACTION|"
    r"SYNTHESIS|SEARCH|STRATEGY|CRITERIA|ANALYS[IE]S|PROCEDURES?|EXPERIMENTAL|RESULTS?|"
    r"FINDINGS?|PRINCIPAL|MAIN|KEY|RECENT|CONCLUSIONS?|INTERPRETATION|IMPLICATIONS?|"
    r"SIGNIFICANCE|RELEVANCE|DISCUSSION|SUMMARY|ABSTRACT|UNLABELLED|FUNDING|REGISTRATION|"
    r"TRIAL|AVAILABILITY|IMPLEMENTATION|SUPPLEMENTARY|INFORMATION|CONTACT|LIMITATIONS?|"
    r"REVIEW|POINTS|STATEMENT|GENERAL|COLLECTION|ELIGIBILITY|SAMPLE|SAMPLES|ANIMALS|"
    r"CASE|REPORT|PRESENTATION|EVIDENCE|ACQUISITION|OF|AND|THE|FOR"
)
_UPPER_LABEL = re.compile(
    rf"(?:^|(?<=[.!?:)\]]\s)|(?<=\s\s))(?P<label>(?:{_LABEL_WORD})(?:(?:\s*[,&/]\s*|\s+)"
    rf"(?:{_LABEL_WORD}))*)\s*:?\s+(?=[A-Z0-9(\[\"'])"
)
_TITLE_LABEL = re.compile(
    r"(?:^|(?<=[.?!]\s))(?P<label>(?:Background|Context|Introduction|Objectives?|Aims?|"
    r"Purpose|Methods?|Methodology|Materials and methods|Design|Setting|Participants|"
    r"Patients|Interventions?|Main outcome measures?|Measurements|Results?|Findings|"
    r"Key findings|Main results|Conclusions?|Interpretation|Implications|Discussion|"
    r"Summary|Significance|Funding|Limitations)\s*:)\s+"
)
_HEADING_LINE = re.compile(r"(?m)^(?:#{1,6}[ \t]+)?(?P<label>[A-Z][^\n.!?:]{1,60})[ \t]*\n")
_CONNECTORS = frozenset({"OF", "AND", "THE", "FOR"})


@dataclass(frozen=True)
class LabelSpan:
    start: int  # where the label begins
    end: int  # where the labelled text begins (after the label and its spaces)
    label: str


def label_spans(text: str, start: int = 0, end: int | None = None) -> list[LabelSpan]:
    """Inline structure labels in ``text[start:end]`` with absolute offsets, in order."""
    end = len(text) if end is None else end
    found: list[LabelSpan] = []
    for pattern in (_UPPER_LABEL, _TITLE_LABEL, _HEADING_LINE):
        for m in pattern.finditer(text, start, end):
            label = m.group("label").strip(" :,")
            if pattern is _UPPER_LABEL and not _real_upper_label(label):
                continue
            if pattern is _HEADING_LINE and not label_role(label):
                continue  # a line of its own that names no part of a report
            found.append(LabelSpan(m.start(), m.end(), label))
    found.sort(key=lambda s: s.start)
    return [s for i, s in enumerate(found) if i == 0 or s.start >= found[i - 1].end]


def _real_upper_label(label: str) -> bool:
    tokens = re.findall(r"[A-Z]+", label)
    return bool(tokens) and tokens[0] not in _CONNECTORS and tokens[-1] not in _CONNECTORS


def label_role(label: str) -> str:
    """The role a structure label gives the sentences under it ('' when it says nothing)."""
    up = label.upper()

    def has(*keys: str) -> bool:
        return any(re.search(rf"\b{k}", up) for k in keys)

    mixed = has("METHOD") and has("RESULT", "FINDING")
    if mixed or has("SUMMARY", "ABSTRACT", "UNLABELLED", "DISCUSSION", "EVIDENCE"):
        return ""
    if has("CONCLUSION", "INTERPRETATION", "IMPLICATION", "SIGNIFICANCE", "KEY POINT"):
        return CONCLUSION
    if has("RESULT", "FINDING"):
        return RESULT
    if has("FUNDING", "REGISTRATION", "AVAILABILITY", "SUPPLEMENTARY", "CONTACT"):
        return BOILERPLATE
    if has("OBJECTIVE", "AIM", "PURPOSE", "GOAL", "HYPOTHES", "QUESTION"):
        return AIM
    if has("BACKGROUND", "CONTEXT", "INTRODUCTION", "RATIONALE", "IMPORTANCE", "MOTIVATION"):
        return BACKGROUND
    if has("DESIGN", "SETTING", "PARTICIPANT", "PATIENT", "SUBJECT", "POPULATION", "SAMPLE"):
        return DESIGN
    if has(
        "METHOD",
        "MATERIAL",
        "INTERVENTION",
        "EXPOSURE",
        "MEASURE",
        "OUTCOME",
        "DATA",
        "SOURCE",
        "SELECTION",
        "EXTRACTION",
        "SEARCH",
        "CRITERIA",
        "ANALYS",
        "PROCEDURE",
        "EXPERIMENTAL",
        "COLLECTION",
        "ELIGIBILITY",
        "ANIMALS",
        "STUDY",
        "LIMITATION",
    ):
        return METHOD
    return ""


def strip_label(sentence: str) -> str:
    """The sentence without a leading structure label ("RESULTS The drug…" -> "The drug…")."""
    spans = label_spans(sentence)
    if spans and spans[0].start == 0:
        return sentence[spans[0].end :]
    return sentence


_BOILERPLATE = re.compile(
    r"(©|\bcopyright\b|\ball rights reserved\b|\btrial registration\b|clinicaltrials\.gov|"
    r"\bISRCTN\b|\bNCT\d{6,}|\bfunded by\b|\b(?:work|study|research|project|trial) (?:was|is) "
    r"(?:\w+ )?supported by\b|\bsupported (?:in part )?by (?:a |an )?(?:grants?|funding|the "
    r"National)\b|"
    r"\bgrant (?:no|number)\b|\bthe authors? (?:declare|report|have no)\b|\bconflicts? of "
    r"interest\b|\bpublished by\b|\bdatabase record\b|\bdoi:|\bhttps?://|\bfree full text\b|"
    r"\bsupplementary (?:information|material|data)\b|\bavailable (?:at|from|online)\b|"
    r"\bcontact:|\bcorresponding author\b|\bthis article is protected\b)",
    re.IGNORECASE,
)
_DANGLING = re.compile(
    r"^(?:and|but|or|nor|which|who|whom|whose|that)\b|"
    r"^(?:whereas|while|although|because|since|though)\b(?![^,]{3,}, )|"
    r"^(?:it|they|them|he|she|its|their|his|her|such|the latter|the former|the remaining|"
    r"others|the others)\b|"
    r"^(?:this|these|that|those)\s+(?:(?:is|are|was|were|has|have|had|may|might|can|could|"
    r"would|will|should|must|suggests?|indicates?|shows?|demonstrates?|implies|means|"
    r"raises|provides?|supports?|leads?|results?|makes?|explains?|confirms?|reveals?|"
    r"highlights?|underscores?|argues?|also|not|in turn|latter|former)\b|,)",
    re.IGNORECASE,
)


# A sentence that states a study's aim ("We aimed to establish …", "To determine whether
# …", "This review summarizes …"). Kept beside the learned model, which reads aims worst of
# the five roles: on held-out structured abstracts the model with this cue has macro-F1
# 0.590 (aim F1 0.51) against the model alone 0.557 (aim F1 0.34; docs/benchmarks.md).
AIM_CUE = re.compile(
    r"^(?:(?:the )?(?:main |primary |principal )?(?:aims?|objectives?|purposes?|goals?)"
    r"(?: of (?:this|the|our|the present) (?:study|work|paper|review|trial|analysis|"
    r"article|report))? (?:is|was|were|are) to\b|our (?:aim|objective|purpose|goal) "
    r"(?:is|was) to\b|to (?:determine|investigate|assess|evaluate|examine|test|explore|"
    r"estimate|compare|identify|describe|characteri[sz]e|quantify|establish|clarify|"
    r"study|analy[sz]e|measure|review|understand|elucidate|address|ascertain|define|"
    r"develop|summari[sz]e|report)\b|we (?:aimed|aim|sought|seek|set out|wanted|wished|"
    r"intended|attempted|propose to|hypothesi[sz]ed|hypothesi[sz]e|asked|ask|tested whether|"
    r"investigated whether|examined whether|assessed whether|evaluated whether)\b|"
    r"(?:this|the present|the current|our|in this) (?:study|paper|review|article|work|trial|"
    r"report|analysis|chapter)(?:,? we)? (?:aims?|aimed|seeks?|sought|was designed|"
    r"is designed|describes?|presents?|reviews?|summari[sz]es?|discusses?|examines?|"
    r"explores?|investigates?|evaluates?|assesses?|addresses?|focuses|will|outlines?|"
    r"considers?|highlights?|proposes?|introduces?|provides? an? (?:overview|review|summary))\b|"
    r"here,? we (?:investigate|investigated|examine|examined|test|tested|ask|asked|explore|"
    r"explored|review|describe|address|assess|evaluate|propose|study|studied|consider)\b)",
    re.IGNORECASE,
)


def states_aim(text: str) -> bool:
    """The sentence says what a study set out to do, not what it found."""
    return bool(AIM_CUE.search(text))


# A sentence that says what is not known or what a field cares about ("… remains unclear",
# "little is known", "has attracted increasing attention", "is a major public health
# problem"): background, not a finding. The model reads such sentences as background, which
# mining keeps as a statement; this cue drops them. What it catches and costs (held-out
# role labels, gold rationales, the libraries' gold quotes) is measured in
# weights/roles/MODEL_CARD.md and docs/benchmarks.md.
GAP_CUE = re.compile(
    r"\b(?:remains? (?:unclear|unknown|uncertain|controversial|poorly understood|elusive|"
    r"to be (?:determined|established|elucidated|clarified))|(?:is|are|was|were) (?:not|"
    r"poorly|incompletely|largely|still) (?:known|understood|defined|established|"
    r"characteri[sz]ed)|little is known|not (?:been )?(?:well |adequately |fully )?"
    r"(?:studied|understood|established|characteri[sz]ed|defined|evaluated|investigated)|"
    r"(?:has|have) (?:been )?(?:attracted|gained|received) (?:much |increasing |considerable )?"
    r"(?:attention|interest)|(?:is|are) (?:a )?(?:frequently|commonly|widely) used|"
    r"(?:is|are) (?:a )?(?:major|leading|growing|important|serious|significant|global) "
    r"(?:public health )?(?:problem|concern|cause|burden|challenge|issue)|"
    r"(?:a|an) (?:number|variety|range) of (?:hypotheses|studies|mechanisms) (?:have|has) "
    r"been|whether [^.]{3,160} (?:is|are|remains) (?:not known|unknown|unclear))\b",
    re.IGNORECASE,
)


def states_gap(text: str) -> bool:
    """The sentence says what is not known, or why a topic matters, not what was found."""
    return bool(GAP_CUE.search(text))


def boilerplate(text: str) -> bool:
    """Funding, registration, copyright, a link or a contact line: not a finding."""
    return bool(_BOILERPLATE.search(text))


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def fragment(text: str) -> str:
    """Why ``text`` is not a whole sentence ('' when it is)."""
    if not text or text[0].islower() and not re.match(r"^[a-z]+[A-Z0-9]", text):
        return "starts in lower case"
    if not _balanced(text):
        return "unbalanced brackets"
    verb = _subjectless(text)
    if verb:
        return f"starts with the verb {verb!r}: its subject is in another sentence"
    if _DANGLING.match(text):
        return f"starts with {text.split()[0]!r}, which refers to something outside it"
    return ""


# Effect verbs in their bare form: a sentence that opens with one (after adverbs) has no
# subject: "Only moderately reduce CVD mortality." ("Lower" and "raise" also open noun
# phrases: "Lower doses were …".)
_BARE_VERBS = frozenset(
    v for v in EFFECT_VERB_OPPOSITES if " " not in v and not v.endswith("s")
) - {"lower", "raise", "help"}


def _subjectless(text: str) -> str:
    """The bare effect verb a sentence opens with, after adverbs ('' when it does not)."""
    for word in re.findall(r"[A-Za-z]+", text)[:5]:
        if is_adverb(word):
            continue
        return word.lower() if word.lower() in _BARE_VERBS else ""
    return ""
