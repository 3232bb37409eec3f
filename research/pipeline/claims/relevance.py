"""How much a candidate claim bears on the plan's question and its subquestion.

Every candidate gets a :class:`Relevance`: a score in [0, 1] that is a weighted sum of
interpretable parts, each in [0, 1]:

* ``dense_question`` / ``dense_subquestion`` — cosine similarity of the candidate's
  sentence to the question and to its subquestion (sentence embeddings; absent when no
  encoder is given, and the note says so);
* ``lexical`` — the share of the question's and subquestion's terms the sentence
  contains, each term weighted by its inverse document frequency in the library (rare
  words such as a drug's name weigh more than "risk" or "adults");
* ``subject`` — the share of the question's *subject* terms (the intervention, exposure or
  thing asked about: "minimum wage increases" in "Do minimum wage increases reduce
  …") found in the sentence, or, at half weight, in its source's title: a finding about
  tax credits and employment does not answer a question about minimum wages; for an effect
  question the geometric mean of that and the same share of its *outcome* terms ("rate of
  employment or hours"), so minimum wages and prices do not answer it either;
* ``context`` — the cosine of the source's title to the question (a result sentence
  often leaves its subject to the title).

For an effect question a candidate must also *name the subject* — one of its words in the
sentence or the title, or a sentence or title whose embedding is within
``SUBJECT_COSINE`` of the subject phrase ("pay floor" for "minimum wage"). One that
does not (``names_subject`` false) is off-topic whatever its score: tax credits and
employment do not answer a question about minimum wages and employment.

When the question or the subquestion asks about an effect on something (an
:class:`~research.pipeline.claims.outcome.OutcomeFocus`), each candidate is also checked
for *naming an outcome* (:func:`~research.pipeline.claims.outcome.match_outcomes`):
``names_outcome`` false makes it off-outcome — minimum wages and teen smoking do not
answer a question about minimum wages and employment — and ``outcome_match`` says how it
named one ("employment", "title: hours", "jobs ≈ employment (0.71)").

The weights (``RelevanceWeights``) are fitted, not set by hand: ``manage.py train_relevance``
learns them from claims and their rationale sentences (which sentence of a cited abstract, or of
a neighbouring one, answers the claim) and writes ``weights/relevance/relevance.json`` beside its
model card; :func:`shipped_weights` reads that file. The parts are the same in any domain; what
the fit learns is how much each one counts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from research.pipeline.claims.outcome import OutcomeFocus, match_outcomes
from research.pipeline.retrieve.sparse import analyze

Encode = Callable[[list[str]], NDArray[np.float32]]
DEFAULT_IDF = 6.0  # a term the library has never seen weighs like a rare one
# A sentence (or its title) this close to the subject phrase names it in other words.
SUBJECT_COSINE = 0.45
SHIPPED = (
    Path(__file__).resolve().parent.parent / "language" / "weights" / "relevance" / "relevance.json"
)


@dataclass(frozen=True)
class RelevanceWeights:
    """How much each part counts. The defaults are the hand-set weights the fit replaced,
    kept as the baseline ``train_relevance`` compares with; mining uses
    :func:`shipped_weights`."""

    dense_question: float = 0.20
    dense_subquestion: float = 0.10
    lexical: float = 0.05
    subject: float = 0.35
    context: float = 0.30

    def parts(self) -> dict[str, float]:
        return {
            "dense_question": self.dense_question,
            "dense_subquestion": self.dense_subquestion,
            "lexical": self.lexical,
            "subject": self.subject,
            "context": self.context,
        }


@lru_cache(maxsize=1)
def shipped_record(path: Path = SHIPPED) -> dict[str, Any]:
    """The fit's record (``train_relevance``); a missing or unreadable file is an error,
    never a silent fall back to other weights."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        _weights_of(record)
        float(record["off_topic"])
    except OSError as exc:
        raise RuntimeError(f"relevance weights {path} cannot be read: {exc}") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RuntimeError(f"{path} is not a relevance weights record ({exc!r})") from exc
    return dict(record)


def shipped_weights() -> RelevanceWeights:
    """The fitted weights."""
    return _weights_of(shipped_record())


def _weights_of(record: dict[str, Any]) -> RelevanceWeights:
    return RelevanceWeights(**{k: float(v) for k, v in record["weights"].items()})


def shipped_off_topic() -> float:
    """The fitted weights' off-topic floor: below it a candidate is dropped as off-topic."""
    return float(shipped_record()["off_topic"])


@dataclass(frozen=True)
class Relevance:
    score: float
    dense_question: float = 0.0
    dense_subquestion: float = 0.0
    lexical: float = 0.0
    subject: float = 0.0
    context: float = 0.0
    names_subject: bool = True  # an effect question's subject is named (or paraphrased)
    names_outcome: bool = True  # an outcome asked about is named (or none is asked)
    outcome_match: str = ""  # how it names one: "employment", "title: hours", "jobs ≈ …"
    other_outcome: str = ""  # another outcome it reports a measure of, when it names none

    def to_json(self) -> dict[str, float | bool | str]:
        return {
            "score": self.score,
            "dense_question": self.dense_question,
            "dense_subquestion": self.dense_subquestion,
            "lexical": self.lexical,
            "subject": self.subject,
            "context": self.context,
            "names_subject": self.names_subject,
            "names_outcome": self.names_outcome,
            "outcome_match": self.outcome_match,
            "other_outcome": self.other_outcome,
        }

    def features(self) -> list[float]:
        return [
            self.dense_question,
            self.dense_subquestion,
            self.lexical,
            self.subject,
            self.context,
        ]


@dataclass(frozen=True)
class Focus:
    """What a subquestion's candidates are scored against."""

    question: str
    subquestion: str
    subject: str  # the thing asked about; the whole question when the shape is unknown
    idf: dict[str, float]  # analyzed term -> inverse document frequency in the library
    outcome: str = ""  # what the subject's effect is asked on, when the question says
    outcomes: OutcomeFocus | None = None  # the outcomes a candidate must name, if any


def terms(text: str) -> set[str]:
    return set(analyze(text))


def weighted_share(needle: set[str], hay: set[str], idf: dict[str, float]) -> float:
    total = sum(idf.get(t, DEFAULT_IDF) for t in needle)
    if not total:
        return 0.0
    return sum(idf.get(t, DEFAULT_IDF) for t in needle & hay) / total


@dataclass(frozen=True)
class Candidate:
    """What relevance needs of one candidate: its sentence and its source's title."""

    text: str
    title: str = ""


def score_candidates(
    candidates: Sequence[Candidate],
    focus: Focus,
    encode: Encode | None,
    weights: RelevanceWeights | None = None,
) -> list[Relevance]:
    """One :class:`Relevance` per candidate, in order."""
    if not candidates:
        return []
    weights = weights or shipped_weights()
    dense = _dense(candidates, focus, encode)
    q_terms = terms(focus.question) | terms(focus.subquestion)
    s_terms = terms(focus.subject) or terms(focus.question)
    o_terms = terms(focus.outcome) - s_terms
    out = []
    for i, cand in enumerate(candidates):
        sent, title = terms(cand.text), terms(cand.title)
        lexical = weighted_share(q_terms, sent, focus.idf)
        subject = _key_share(s_terms, sent, title, focus.idf)
        names = True
        if o_terms:  # an effect question: both what acts and what it acts on must be there
            names = subject > 0 or dense[3][i] >= SUBJECT_COSINE
            subject = math.sqrt(subject * _key_share(o_terms, sent, title, focus.idf))
        parts = {
            "dense_question": dense[0][i],
            "dense_subquestion": dense[1][i],
            "lexical": lexical,
            "subject": subject,
            "context": dense[2][i],
        }
        parts = {k: round(min(1.0, max(0.0, v)), 4) for k, v in parts.items()}
        used = {k: w for k, w in weights.parts().items() if k in parts}
        if encode is None:  # no dense parts: the lexical ones carry the whole weight
            used = {k: w for k, w in used.items() if not k.startswith(("dense", "context"))}
        total = sum(used.values()) or 1.0
        score = sum(parts[k] * w for k, w in used.items()) / total
        out.append(
            Relevance(
                score=round(score, 4),
                dense_question=parts["dense_question"],
                dense_subquestion=parts["dense_subquestion"],
                lexical=parts["lexical"],
                subject=parts["subject"],
                context=parts["context"],
                names_subject=names,
            )
        )
    return _with_outcomes(candidates, focus, encode, out)


def _with_outcomes(
    candidates: Sequence[Candidate],
    focus: Focus,
    encode: Encode | None,
    scored: list[Relevance],
) -> list[Relevance]:
    """The outcome check of the candidates that name the subject (the others are off-topic
    already): named, how, or which other outcome they report instead."""
    wanted = focus.outcomes
    if wanted is None:
        return scored
    todo = [i for i, r in enumerate(scored) if r.names_subject]
    matches = match_outcomes(
        [(candidates[i].text, candidates[i].title) for i in todo], wanted, focus.idf, encode
    )
    out = list(scored)
    for i, match in zip(todo, matches, strict=True):
        names = match.named or (not wanted.required and not match.other)
        out[i] = replace(
            out[i], names_outcome=names, outcome_match=match.how, other_outcome=match.other
        )
    return out


def _key_share(key: set[str], sent: set[str], title: set[str], idf: dict[str, float]) -> float:
    """The key terms in the sentence, or (at half weight) in its source's title."""
    return max(weighted_share(key, sent, idf), 0.5 * weighted_share(key, title, idf))


def _dense(
    candidates: Sequence[Candidate], focus: Focus, encode: Encode | None
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Cosines: sentence–question, sentence–subquestion, title–question, and the better of
    sentence–subject and title–subject (a paraphrase of the subject: "cholecalciferol")."""
    n = len(candidates)
    if encode is None:
        return [0.0] * n, [0.0] * n, [0.0] * n, [0.0] * n
    titles = sorted({c.title for c in candidates if c.title})
    texts = [focus.question, focus.subquestion, focus.subject or focus.question]
    vectors = encode([*texts, *(c.text for c in candidates), *titles])
    q, sq, subj = vectors[0], vectors[1], vectors[2]
    sent = vectors[3 : 3 + n]
    title_vec = dict(zip(titles, vectors[3 + n :], strict=True))
    dq = [float(v) for v in sent @ q]
    dsq = [float(v) for v in sent @ sq]
    ctx = [float(title_vec[c.title] @ q) if c.title in title_vec else 0.0 for c in candidates]
    about = [
        max(
            float(sent[i] @ subj), float(title_vec[c.title] @ subj) if c.title in title_vec else 0.0
        )
        for i, c in enumerate(candidates)
    ]
    return dq, dsq, ctx, about


def idf_of(df: dict[str, int], documents: int) -> dict[str, float]:
    """BM25's idf (Lucene): ln(1 + (N - df + 0.5) / (df + 0.5)) for each term."""
    return {
        term: math.log(1 + (documents - n + 0.5) / (n + 0.5)) for term, n in df.items() if n >= 0
    }
