"""What a sentence does in its document: report a result or a conclusion, or something else.

Claims are mined from findings only. A sentence's role comes from, in order:

1. **Its form** (:mod:`research.pipeline.language.structure`): a question mark, boilerplate
   (funding, registration, copyright), a fragment (a lower-case start, unbalanced brackets,
   a subject or referent in another sentence).
2. **The structure label** it sits under ("RESULTS", "Conclusions:", a "## Methods"
   heading): a results, conclusions or boilerplate label decides; under any other label the
   sentence keeps the label's role unless the learned model reads it as a result or a
   conclusion with at least :data:`MIN_NON_FINDING_P` (a p value reported under METHODS).
3. **An aim cue** ("We aimed to …", "To determine whether …": :func:`states_aim`), kept
   because it reads aims better than the model does (macro-F1 0.590 with it, 0.557
   without, on held-out structured abstracts), and **a gap cue** ("… remains unclear",
   "little is known": :func:`states_gap`), because the model's background reading never
   drops a sentence and a statement of what is not known is no finding (26 of its 28
   held-out hits are background or aim; 1 of 732 gold rationales: model card).
4. **The learned sentence-role model** (:mod:`research.pipeline.language.roles_model`,
   trained on structured abstracts): background, aim, method, result or conclusion. An aim
   or a method drops the sentence only when the model gives it at least
   :data:`MIN_NON_FINDING_P`; below that, and whenever it reads background, the sentence is
   a plain ``statement``, kept as a possible claim. Documentation and policy text read as
   background, aims and methods to a model of abstracts ("Agencies must consider the value
   of publishing custom code" is an aim to it at p 0.77), and most of their sentences are
   claims a reader keeps.

The model replaced 20 cue regexes (aims, methods, designs, analysis steps, background,
reporting and result cues): on held-out structured abstracts its macro-F1 is 0.56 against
the regexes' 0.44 (``weights/roles/MODEL_CARD.md``). The threshold and what it costs are
measured in docs/benchmarks.md ("Learned sentence roles in mining").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from research.pipeline.language import roles_model
from research.pipeline.language.structure import (
    AIM,
    BACKGROUND,
    BOILERPLATE,
    CONCLUSION,
    DESIGN,
    METHOD,
    RESULT,
    boilerplate,
    fragment,
    label_role,
    states_aim,
    states_gap,
    strip_label,
)

STATEMENT = "statement"
QUESTION = "question"
FRAGMENT = "fragment"
# The ten role names are this module's vocabulary (seven are also the roles a structure
# label can give, so language.structure defines those).
__all__ = [
    "AIM",
    "BACKGROUND",
    "BOILERPLATE",
    "CONCLUSION",
    "DESIGN",
    "FRAGMENT",
    "METHOD",
    "QUESTION",
    "RESULT",
    "STATEMENT",
    "ROLES",
    "FINDING_ROLES",
    "NON_FINDING_ROLES",
    "DROP_REASONS",
    "MIN_NON_FINDING_P",
    "Role",
    "classify_sentence",
    "classify_sentences",
    "learned_roles",
]

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

# An aim or method the model gives with less probability than this is not trusted to drop a
# sentence: it stays a statement; nor is a finding it reads under a label of another role
# trusted over the label below it (a p value under METHODS is: "METHODS AND RESULTS"
# abstracts mix both). The threshold was read off the table of what each value drops
# (gold findings of three sets against other sentences): weights/roles/MODEL_CARD.md,
# "How mining uses it".
MIN_NON_FINDING_P = 0.8
# The roles whose reading by the model may drop a sentence (background never does: what a
# document takes as known is often the very claim a reader keeps).
_DROPPING = frozenset({AIM, METHOD})


@dataclass(frozen=True)
class Role:
    role: str
    cue: str = ""  # the label, form or model reading that decided it

    @property
    def is_finding(self) -> bool:
        return self.role in FINDING_ROLES

    @property
    def drop_reason(self) -> str:
        return DROP_REASONS.get(self.role, "")


def classify_sentence(sentence: str, label: str = "") -> Role:
    """The role of one sentence under the structure label it sits under ('' when none)."""
    return classify_sentences([sentence], [label])[0]


def classify_sentences(sentences: Sequence[str], labels: Sequence[str] = ()) -> list[Role]:
    """The role of each sentence (module docstring), the learned model run once for all."""
    labels = list(labels) or [""] * len(sentences)
    texts: list[str] = []
    found_labels: list[tuple[str, str]] = []  # (label given or opening the sentence, its role)
    roles: list[Role | None] = []
    for sentence, label in zip(sentences, labels, strict=True):
        text = strip_label(sentence.strip())
        if label == "" and text != sentence.strip():
            label = sentence.strip()[: len(sentence.strip()) - len(text)].strip(" :")
        by_label = label_role(label) if label else ""
        texts.append(text)
        found_labels.append((label, by_label))
        roles.append(_by_form(text) or _by_final_label(by_label, label) or _by_cue(text))
    pending = [i for i, role in enumerate(roles) if role is None]
    for i, (role, p) in zip(pending, learned_roles([texts[i] for i in pending]), strict=True):
        label, by_label = found_labels[i]
        roles[i] = _by_model(role, p, by_label, label)
    return [role for role in roles if role is not None]


def _by_form(text: str) -> Role | None:
    if text.rstrip().endswith("?"):
        return Role(QUESTION, "question mark")
    if boilerplate(text):
        return Role(BOILERPLATE, "boilerplate cue")
    why = fragment(text)
    return Role(FRAGMENT, why) if why else None


def _by_cue(text: str) -> Role | None:
    """The two cues kept beside the model, each measured (module docstring)."""
    if states_aim(text):
        return Role(AIM, "aim cue")
    return Role(BACKGROUND, "gap cue") if states_gap(text) else None


def _by_final_label(by_label: str, label: str) -> Role | None:
    """A results, conclusions or boilerplate label decides whatever the sentence says."""
    return (
        Role(by_label, f"label {label}") if by_label in (RESULT, CONCLUSION, BOILERPLATE) else None
    )


def _by_model(role: str, p: float, by_label: str, label: str) -> Role:
    """A finding the model reads is a finding (under a label of another role only at
    :data:`MIN_NON_FINDING_P` or more); otherwise a label decides; without one, an aim
    or method read at :data:`MIN_NON_FINDING_P` or more drops it; the rest are statements."""
    reading = f"sentence-role model: {role}, p {p:.2f}"  # named as mining names roles
    if role in FINDING_ROLES and (not by_label or p >= MIN_NON_FINDING_P):
        return Role(role, reading)
    if by_label:
        return Role(by_label, f"label {label}")
    if role in _DROPPING and p >= MIN_NON_FINDING_P:
        return Role(role, reading)
    return Role(STATEMENT, reading)


_CACHE: OrderedDict[str, tuple[str, float]] = OrderedDict()
_CACHE_SIZE = 50_000


def learned_roles(texts: Sequence[str]) -> list[tuple[str, float]]:
    """The model's ``(role, probability)`` of each text (cached by text: the verifier asks
    again about the sentences mining read)."""
    missing = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if missing:
        for text, found in zip(missing, roles_model.classify(missing), strict=True):
            _CACHE[text] = found
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return [_CACHE[t] for t in texts]
