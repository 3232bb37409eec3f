"""What a sentence does in its document: report a result or a conclusion, or something else.

Claims are mined from findings only. A sentence's role comes from two kinds of signal
that hold in any domain:

1. **Structure labels** — the heading or structured-abstract label it sits under
   ("RESULTS", "Conclusions:", "DESIGN, SETTING, AND PARTICIPANTS", a "## Findings" or
   "Methods" heading line of a report). :func:`label_spans` finds inline labels in a
   text (so a span holding a label can be cut there) and :func:`label_role` maps a label
   to a role.
2. **Cues** in the sentence itself — result cues (significance, comparisons, effect
   directions, associations, numbers with units, "we found"), conclusion cues ("these
   results suggest", "we conclude"), and the cues of aims ("to determine whether", "we
   aimed to"), methods and designs ("was measured", "were randomly assigned", "a
   prospective cohort study of"), background and gaps ("remains unclear", "is not
   known"), boilerplate (funding, registration, copyright), questions and fragments.

A label decides when it is unambiguous (a sentence under METHODS is a method sentence
unless it carries strong result cues, such as a p value); otherwise the cues decide;
a plain declarative sentence with neither is a ``statement``, kept as a possible claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research.pipeline.text import (
    DOWN_WORDS,
    EFFECT_VERB_OPPOSITES,
    NULL_EFFECT,
    UP_WORDS,
    is_adverb,
    quantities,
    words,
)

RESULT = "result"
CONCLUSION = "conclusion"
STATEMENT = "statement"
METHOD = "method"
DESIGN = "design"
AIM = "aim"
BACKGROUND = "background"
BOILERPLATE = "boilerplate"
QUESTION = "question"
FRAGMENT = "fragment"

# Every role, in the order ledger.models.SentenceRole lists them (a test keeps the two equal).
ROLES = (
    RESULT,
    CONCLUSION,
    STATEMENT,
    METHOD,
    DESIGN,
    AIM,
    BACKGROUND,
    BOILERPLATE,
    QUESTION,
    FRAGMENT,
)
FINDING_ROLES = frozenset({RESULT, CONCLUSION, STATEMENT})
NON_FINDING_ROLES = frozenset({METHOD, DESIGN, AIM, BACKGROUND, BOILERPLATE, QUESTION, FRAGMENT})
DROP_REASONS = {
    METHOD: "describes how the study was done (method), not a finding",
    DESIGN: "describes the study's design or population, not a finding",
    AIM: "states the study's aim or question, not a finding",
    BACKGROUND: "background or a statement of what is not yet known, not a finding",
    BOILERPLATE: "boilerplate (funding, registration, copyright), not a finding",
    QUESTION: "a question, not a claim",
    FRAGMENT: "a sentence fragment (cut by the sentence splitter or a dangling reference)",
}

# --- structure labels ----------------------------------------------------------------------

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


# --- cues -----------------------------------------------------------------------------------

_SIGNIFICANCE = re.compile(
    r"(\bp\s*[<=>≤≥]\s*0?\.\d|\bp\s*=\s*\.\d|\b(?:95|99)\s*%\s*(?:CI|confidence)|\bCI\b|"
    r"\b(?:statistically )?significant(?:ly)?\b|\b(?:odds|hazard|risk|rate) ratios?\b|"
    r"\b(?:OR|RR|HR|IRR|SMD|WMD|MD)\s*[=,:(]|\br\s*=\s*-?0?\.\d)",
    re.IGNORECASE,
)
_COMPARISON = re.compile(
    r"\b(than|compared (?:with|to)|in comparison (?:with|to)|versus|vs\.?|relative to|"
    r"outperform\w*|superior to|inferior to|as (?:effective|good|well) as|no different)\b",
    re.IGNORECASE,
)
_ASSOCIATION = re.compile(
    r"\b(associated with|association (?:between|of|with)|correlat\w+ (?:with|between)|"
    r"predict(?:s|ed|ive of)|linked (?:to|with)|related to|was (?:a|an) (?:risk|protective) "
    r"factor|dependent on|independent(?:ly)? of|contribut\w+ to|responsible for|"
    r"led to|leads to|resulted in|results in|caus(?:es|ed|ing)|induc(?:es|ed)|"
    r"requires?|required for|necessary for|sufficient (?:for|to)|essential for|"
    r"mediat(?:es|ed)|regulat(?:es|ed)|promot(?:es|ed)|inhibit(?:s|ed)|protect(?:s|ed) against)\b",
    re.IGNORECASE,
)
_REPORTING = re.compile(
    r"\b(we|our (?:study|analysis|results|data|findings)|this (?:study|analysis|trial|work))\s+"
    r"(?:also\s+|further\s+|now\s+|here\s+)?(found|find|show|showed|shown|demonstrat\w+|"
    r"observed|observe|identified|identify|report|reported|reveal\w*|establish\w*|"
    r"confirm\w*|provide[sd]? evidence|detected|uncover\w*|document\w*)\b",
    re.IGNORECASE,
)
_CONCLUDING = re.compile(
    r"(^(?:in conclusion|in summary|to conclude|taken together|collectively|overall|thus|"
    r"therefore|hence|together|these (?:results|findings|data|observations)|our (?:results|"
    r"findings|data))\b|\b(?:we conclude|suggest(?:s|ed)? that|indicat(?:es|ed) that|"
    r"we propose that|support(?:s|ed)? the (?:hypothesis|notion|idea|view)|"
    r"provides? (?:evidence|support)|"
    r"(?:results|findings|data) (?:suggest|indicate|show|demonstrate|support|imply))\b)",
    re.IGNORECASE,
)
_AIM = re.compile(
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
_METHOD_ACTIVE = re.compile(
    r"^(?:(?:in|for|using|with|from|among|at|after|during) [^,]{1,80},\s*)?we (?:used|use|"
    r"performed|perform|conducted|conduct|analy[sz]ed|analy[sz]e|studied|recruited|enrolled|"
    r"included|searched|collected|measured|assessed|evaluated|examined|compared|applied|"
    r"followed|randomi[sz]ed|constructed|generated|obtained|calculated|estimated|modell?ed|"
    r"simulated|surveyed|interviewed|developed|designed|implemented|trained|tested|"
    r"screened|sequenced|genotyped|reviewed|identified|extracted|pooled|combined|"
    r"quantified|characteri[sz]ed|monitored|treated|administered|exposed|isolated|"
    r"selected|defined|adapted|built|created|carried out|undertook|systematically|compare|"
    r"exploit|exploited|estimate|study|examine|collect|match|matched|combine|construct|"
    r"employ|employed|leverage|leveraged|adopt|adopted|draw on|drew on|rely on|relied on)\b",
    re.IGNORECASE,
)
_METHOD_PASSIVE = re.compile(
    r"\b(?:was|were|had been)\s+(?:\w+ly\s+)?(?:\w+-)?(?:performed|"
    r"conducted|measured|assessed|evaluated|recorded|collected|obtained|analy[sz]ed|"
    r"calculated|estimated|used|randomi[sz]ed|assigned|allocated|enrolled|recruited|"
    r"included|excluded|matched|followed(?: up)?|administered|given|provided|treated|"
    r"selected|interviewed|surveyed|screened|defined|determined|carried out|applied|"
    r"stratified|adjusted|examined|tested|sampled|genotyped|sequenced|scored|classified|"
    r"categori[sz]ed|extracted|searched|reviewed|pooled|identified|asked|invited|"
    r"instructed|trained|monitored|quantified|characteri[sz]ed|plotted|computed|modell?ed|"
    r"fitted|imaged|scanned|biopsied|harvested|isolated|cultured|incubated|injected|"
    r"fed|housed|sacrificed|killed|exposed|divided|grouped|compared|studied|investigated|"
    r"explored|reported by|obtained from|derived from|drawn from)\b",
    re.IGNORECASE,
)
_METHOD_NOUN = re.compile(
    r"^(?:the )?(?:primary|secondary|main|principal|co-?primary)?\s*(?:outcomes?|end ?points?|"
    r"outcome measures?|measures?|exposures?|variables?|covariates?|inclusion criteria|"
    r"exclusion criteria|eligibility criteria|data sources?|search strategy)\b[^.]{0,40}\b"
    r"(?:was|were|is|are|included|comprised|consisted)\b",
    re.IGNORECASE,
)
_DATA_FROM = re.compile(
    r"^(?:the |our )?(?:data|information|records|samples|estimates|figures|responses)\s+"
    r"(?:\w+\s+)?(?:come|came|were drawn|are drawn|were obtained|are obtained|were taken|"
    r"derive|derived|are from|were from)\s+from|^(?:the |our )?(?:data|information|records)"
    r"\s+(?:are|were)\s+from\b",
    re.IGNORECASE,
)
# What the authors did to the data: a method sentence even when it carries result words
# ("corresponding to an odds ratio of 0.50 … 50% lower risk"), unless it reports a p value or
# an interval. Not in a subordinate clause ("after the models were adjusted for BMI, …").
_ANALYSIS_STEP = re.compile(
    r"\bwe (?:also |further |then |additionally )?(?:adjusted|controlled|accounted|corrected|"
    r"stratified|weighted|standardi[sz]ed) (?:for|by)\b|"
    r"\b(?:was|were|been) (?:\w+ly )?(?:adjusted|controlled|corrected|stratified|weighted|"
    r"standardi[sz]ed) (?:for|by)\b|"
    r"\b(?:was|were|been) (?:\w+ly )?(?:analy[sz]ed|assessed|evaluated|estimated|calculated|"
    r"computed|modell?ed|fitted|pooled|combined|plotted|summari[sz]ed|derived|tested|"
    r"examined|quantified|measured|graphed|regressed) (?:using|by means of|by using|with (?:a|an|"
    r"the) (?:\w+[- ]){0,3}(?:model|regression|test|method|software|package|approach)|via|"
    r"through|according to|in (?:a|an) (?:\w+[- ]){0,3}(?:model|regression|analysis))\b|"
    r"\b(?:were|was) (?:plotted|modell?ed|fitted|graphed|expressed|entered|coded) as\b|"
    r"\b(?:data|results|estimates|studies|trials|effect sizes|(?:odds|hazard|risk|rate) "
    r"ratios|analyses|values|scores|responses) (?:were|was) (?:\w+ly )?(?:pooled|combined|"
    r"synthesi[sz]ed|meta-analy[sz]ed|extracted|abstracted|aggregated|averaged)\b|"
    r"\b(?:trend|regression|dose[- ]response|fitted|calibration) (?:lines?|curves?|models?)\b"
    r"[^.]{0,80}\b(?:corresponding to|provided the|was taken as|were taken as|read off)\b|"
    r"\bon each (?:\w+[- ]){0,3}(?:line|curve|plot|graph)\b",
    re.IGNORECASE,
)
_SUBORDINATE = re.compile(
    r"\b(?:after|when|once|before|until|because|since|if|whereas|while)\b[^,;]*$", re.I
)
_FIGURE = re.compile(
    r"\bp\s*[<=>≤≥]\s*0?\.\d|\bp\s*=\s*\.\d|\b(?:95|99)\s*%\s*(?:CI|confidence)|\bCI\b",
    re.IGNORECASE,
)
_RECEIVED = re.compile(
    r"\b(?:received|receiving|underwent|undergoing|were (?:randomly )?(?:assigned|allocated) "
    r"to|took part|participated|completed (?:the|a|an)|were followed for|"
    r"were eligible|met (?:the )?(?:inclusion|eligibility))\b",
    re.IGNORECASE,
)
_DESIGN = re.compile(
    r"^(?:(?:we|this|the|a|an|our)\s+)?(?:(?:\w+[- ])?(?:blind\w*|randomi[sz]ed|controlled|"
    r"placebo[- ]controlled|double[- ]blind|single[- ]blind|open[- ]label|multicenter|"
    r"multicentre|multi-center|prospective|retrospective|longitudinal|cross[- ]sectional|"
    r"population[- ]based|community[- ]based|hospital[- ]based|nested|matched|pragmatic|"
    r"parallel[- ]group|observational|nationwide|systematic|qualitative|quantitative|"
    r"pilot|phase [0-9iv]+|two[- ]arm|factorial|cluster|crossover|case[- ]control|cohort|"
    r"[0-9]+[- ](?:wk|week|month|year|y|day))[, ]+){1,6}"
    r"(?:study|trial|survey|review|meta-analysis|analysis|cohort|design|experiment|"
    r"intervention study|evaluation|investigation)\b",
    re.IGNORECASE,
)
# A design named as the subject of a reporting verb states what the study found, not how
# it was built: "A randomized trial of tutoring showed fewer absences in the tutored group."
_DESIGN_REPORTS = re.compile(
    r"\b(?:study|trial|analysis|review|meta-analysis|experiment|survey|evaluation|cohort)\b"
    r"[^.;]{0,80}?\b(?:showed|shows|found|finds|demonstrated|demonstrates|revealed|reveals|"
    r"reported|reports|observed|confirmed|confirms)\b",
    re.IGNORECASE,
)
_BACKGROUND = re.compile(
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


@dataclass(frozen=True)
class Role:
    role: str
    cue: str = ""  # the label or cue that decided it

    @property
    def is_finding(self) -> bool:
        return self.role in FINDING_ROLES

    @property
    def drop_reason(self) -> str:
        return DROP_REASONS.get(self.role, "")


def result_strength(sentence: str) -> int:
    """How many kinds of result cue the sentence carries (0–5)."""
    ws = words(sentence)
    directional = any(w in UP_WORDS or w in DOWN_WORDS for w in ws)
    return (
        bool(_SIGNIFICANCE.search(sentence))
        + bool(_COMPARISON.search(sentence))
        + bool(_ASSOCIATION.search(sentence) or NULL_EFFECT.search(sentence))
        + directional
        + bool(_REPORTING.search(sentence))
        + bool(any(q.unit for q in quantities(sentence)))
    )


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def classify_sentence(sentence: str, label: str = "") -> Role:
    """The role of one sentence under the structure label it sits under ('' when none).

    1. questions and boilerplate; 2. fragments (a lower-case start, a conjunction or a
    dangling pronoun first, unbalanced brackets); 3. a structure label, unless the sentence
    reports a result outright (a p value, "no significant difference", "we found");
    4. aim, design and method cues; 5. result and conclusion cues; 6. background cues;
    7. otherwise a plain statement.
    """
    text = strip_label(sentence.strip())
    if label == "" and text != sentence.strip():
        label = sentence.strip()[: len(sentence.strip()) - len(text)].strip(" :")
    if text.rstrip().endswith("?"):
        return Role(QUESTION, "question mark")
    if _BOILERPLATE.search(text):
        return Role(BOILERPLATE, "boilerplate cue")
    fragment = _fragment(text)
    if fragment:
        return Role(FRAGMENT, fragment)
    if _analysis_step(text):
        return Role(METHOD, "analysis-step cue")
    strength = result_strength(text)
    by_label = label_role(label) if label else ""
    if by_label and (by_label in (RESULT, CONCLUSION, BOILERPLATE) or not _reports(text)):
        return Role(by_label, f"label {label}")
    return _by_cues(text, strength)


def _analysis_step(text: str) -> bool:
    """The sentence says how the data were analysed (in its main clause) and reports no p
    value or interval: "Analyses were adjusted for age", "Data were pooled using …"."""
    if _FIGURE.search(text) or _REPORTING.search(text):
        return False
    return any(not _SUBORDINATE.search(text[: m.start()]) for m in _ANALYSIS_STEP.finditer(text))


def _reports(text: str) -> bool:
    """Cues strong enough to make a sentence under a methods or background label a result:
    significance, an absence of effect, or "we found"."""
    return bool(_SIGNIFICANCE.search(text) or NULL_EFFECT.search(text) or _REPORTING.search(text))


def _fragment(text: str) -> str:
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


def _by_cues(text: str, strength: int) -> Role:
    if _AIM.search(text):
        return Role(AIM, "aim cue")
    if _CONCLUDING.search(text) or _REPORTING.search(text):
        return Role(CONCLUSION if _CONCLUDING.search(text) else RESULT, "reporting cue")
    if _DESIGN.search(text) and strength < 2 and not _DESIGN_REPORTS.search(text):
        return Role(DESIGN, "design cue")
    if _METHOD_ACTIVE.search(text) and not _reports(text):
        return Role(METHOD, "method cue")
    if strength < 2 and (
        _METHOD_NOUN.search(text) or (_METHOD_PASSIVE.search(text) and not _direction_or_null(text))
    ):
        return Role(METHOD, "method cue")
    if _DATA_FROM.search(text) and not _compares(text):
        return Role(METHOD, "method cue (where the data come from)")
    if _RECEIVED.search(text) and not _compares(text):
        return Role(METHOD, "method cue (what participants received or did)")
    if _BACKGROUND.search(text) and strength < 3:
        return Role(BACKGROUND, "background cue")
    if strength >= 1:
        return Role(RESULT, "result cue")
    return Role(STATEMENT, "")


def _compares(text: str) -> bool:
    """Significance, a comparison or an association: what makes a sentence report a result."""
    return bool(
        _SIGNIFICANCE.search(text)
        or _COMPARISON.search(text)
        or _ASSOCIATION.search(text)
        or NULL_EFFECT.search(text)
    )


def _direction_or_null(text: str) -> bool:
    ws = words(text)
    return bool(NULL_EFFECT.search(text)) or any(w in UP_WORDS or w in DOWN_WORDS for w in ws)
