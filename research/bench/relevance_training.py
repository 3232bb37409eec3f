"""Fit relevance's weights on claim → rationale-sentence data (``manage.py train_relevance``).

Relevance (:mod:`research.pipeline.claims.relevance`) scores a candidate sentence as a weighted
sum of five parts in [0, 1]. This module fits those weights, so the ranking that decides which
sentences become claims is learned from labelled data rather than set by hand.

**Data.** Claims that have rationale sentences, from a SciFact-format folder (``corpus.jsonl``
and ``claims_train.jsonl``), minus the first ``skip`` of them: those are the questions
``bench_runs --scifact … --limit 100`` measures, so the benchmark stays out of the fit. Each claim
becomes the question of one list of candidates:

* every sentence of its cited abstracts (its rationale sentences are the positives), and
* every sentence of the ``distractors`` abstracts whose titles are closest to the claim and that
  are not cited — what retrieval brings beside the evidence, so the title's part has something
  to separate.

Each candidate's parts are computed by the production :func:`score_candidates`, against the
question and the planner's first subquestion (``propose_plan`` without an LLM), with the
question's subject and outcome as mining reads them and the library's idf from the same
corpus.

**Fit.** A listwise objective: for each claim, the softmax over its candidates' scores should put
its mass on the rationale sentences (``-log Σ_pos softmax``), with the weights kept non-negative
and an L2 pull towards uniform weights; scores are the weighted sums, scaled by a fitted
temperature. The weights are then normalised to sum to 1, so a score stays in [0, 1]. Other weights
spread the scores otherwise, so the record also carries the off-topic floor on the new scale
(:func:`matched_threshold`): the score above which as many rationale sentences pass as passed
the hand weights' floor of 0.30. Held-out figures come from grouped folds (claims sharing an
abstract stay together): each fold's claims are ranked by the weights fitted on the others, and
by today's weights, with hit@1, hit@3, recall@5 and mean reciprocal rank of the first rationale.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from research.bench.scifact import SciFactClaim, SciFactDoc, grouped_folds, load_claims, load_corpus
from research.pipeline.claims.relevance import (
    Candidate,
    Encode,
    Focus,
    RelevanceWeights,
    idf_of,
    score_candidates,
    terms,
)

HAND_OFF_TOPIC = 0.30  # the off-topic floor the hand weights were used with
PARTS = ("dense_question", "dense_subquestion", "lexical", "subject", "context")
Log = Callable[[str], None]


@dataclass(frozen=True)
class Question:
    """One claim's candidate list: parts (n × 5) and which candidates are rationales."""

    claim_id: int
    parts: NDArray[np.float64]
    positive: NDArray[np.bool_]


def build(
    directory: Path, encode: Encode, skip: int = 100, distractors: int = 3, log: Log = print
) -> list[Question]:
    """The candidate lists of every claim with rationales after the first ``skip``."""
    corpus = load_corpus(directory)
    claims = [c for c in load_claims(directory, "train") if c.rationales][skip:]
    idf = texts_idf([" ".join((doc.title, *doc.sentences)) for doc in corpus.values()])
    doc_ids = sorted(corpus)
    log(f"encoding {len(doc_ids)} titles for the distractor abstracts")
    titles = encode([corpus[d].title for d in doc_ids])
    claim_vecs = encode([c.text for c in claims])
    out = []
    for n, claim in enumerate(claims, start=1):
        near = np.argsort(-(titles @ claim_vecs[n - 1]))
        extra = [doc_ids[i] for i in near[: distractors + len(claim.cited_doc_ids) + 2]]
        extra = [d for d in extra if d not in claim.cited_doc_ids][:distractors]
        docs = [corpus[d] for d in (*claim.rationales, *extra) if d in corpus]
        cands, positive = candidates_of(claim, docs)
        out.append(scored_question(claim.claim_id, claim.text, cands, positive, idf, encode))
        if n % 100 == 0:
            log(f"{n}/{len(claims)} claims")
    return out


def library_lists(
    library_dir: Path, docs: Path, encode: Encode, distractors: int = 3
) -> list[Question]:
    """Out-of-domain candidate lists from a benchmark library (``docs/bench/libraries/<name>``
    and its documents folder): for each of its questions, every sentence of the documents its
    gold quotes come from and of the ``distractors`` documents whose titles are closest to the
    question, as the product extracts and splits them; a sentence overlapping a gold quote is
    a positive. Never fitted on: these lists only measure."""
    from research.bench.library_manifest import load_questions
    from research.bench.library_scoring import find_quote
    from research.pipeline.extract import extract
    from research.pipeline.language.sentences import split_sentences

    texts: dict[str, tuple[str, str]] = {}
    for path in sorted(docs.iterdir()):
        if path.is_file():
            got = extract(path.read_bytes(), filename=path.name)
            texts[path.name] = (got.title, got.text)
    idf = texts_idf([f"{title} {text}" for title, text in texts.values()])
    names = sorted(texts)
    title_vecs = encode([texts[n][0] or n for n in names])
    out = []
    for number, question in enumerate(load_questions(library_dir)):
        gold_files = {g.file for g in question.gold}
        near = np.argsort(-(title_vecs @ encode([question.question])[0]))
        extra = [names[i] for i in near if names[i] not in gold_files][:distractors]
        cands: list[Candidate] = []
        positive: list[bool] = []
        for name in [*sorted(gold_files & set(texts)), *extra]:
            title, text = texts[name]
            spans = [
                found
                for g in question.gold
                if g.file == name and (found := find_quote(text, g.quote)) is not None
            ]
            for start, end in split_sentences(text):
                cands.append(Candidate(text[start:end], title))
                positive.append(any(min(end, b) - max(start, a) > 0 for a, b in spans))
        out.append(scored_question(number, question.question, cands, positive, idf, encode))
    return out


def scored_question(
    number: int,
    question: str,
    cands: list[Candidate],
    positive: list[bool],
    idf: dict[str, float],
    encode: Encode,
) -> Question:
    """The candidates' parts as mining computes them: against the question and the offline
    planner's first subquestion, with mining's reading of its subject and outcome."""
    from research.pipeline.claims.select import outcome_of, subject_of
    from research.pipeline.planner import propose_plan

    subquestion = propose_plan(question, None).subquestions[0].text
    focus = Focus(question, subquestion, subject_of(question), idf, outcome_of(question))
    scored = score_candidates(cands, focus, encode, RelevanceWeights())
    parts = np.array([[getattr(r, p) for p in PARTS] for r in scored], dtype=np.float64)
    return Question(number, parts, np.array(positive, dtype=bool))


def candidates_of(
    claim: SciFactClaim, docs: Sequence[SciFactDoc]
) -> tuple[list[Candidate], list[bool]]:
    cands, positive = [], []
    for doc in docs:
        gold = set(claim.rationales.get(doc.doc_id, ()))
        for i, sentence in enumerate(doc.sentences):
            cands.append(Candidate(sentence, doc.title))
            positive.append(i in gold)
    return cands, positive


def texts_idf(texts: Sequence[str]) -> dict[str, float]:
    """Each analyzed term's idf over ``texts`` (one per document), as the library's is."""
    df = Counter(term for text in texts for term in terms(text))
    return idf_of(dict(df), len(texts))


def fit(questions: Sequence[Question], l2: float = 0.5) -> NDArray[np.float64]:
    """Non-negative weights (sum 1) maximising the rationales' softmax share per question."""
    from scipy.optimize import minimize

    usable = [q for q in questions if q.positive.any() and not q.positive.all()]
    uniform = 1.0 / len(PARTS)

    def loss(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        w, temp = theta[:-1], theta[-1]
        total, grad = 0.0, np.zeros_like(theta)
        for q in usable:
            s = q.parts @ w
            z = temp * s
            z = z - z.max()
            e = np.exp(z)
            p_all = e / e.sum()
            p_pos = e[q.positive].sum() / e.sum()
            total -= math.log(max(p_pos, 1e-12))
            # d(-log p_pos)/dz = p_all - (e * pos) / e[pos].sum()
            dz = p_all - np.where(q.positive, e, 0.0) / e[q.positive].sum()
            grad[:-1] += temp * (q.parts.T @ dz)
            grad[-1] += float(s @ dz)
        n = len(usable)
        total = total / n + l2 * float(((w - uniform) ** 2).sum())
        grad = grad / n
        grad[:-1] += 2 * l2 * (w - uniform)
        return total, grad

    start = np.array([*([uniform] * len(PARTS)), 10.0])
    bounds = [(0.0, 1.0)] * len(PARTS) + [(0.1, 200.0)]
    result = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds)
    weights: NDArray[np.float64] = np.asarray(result.x[:-1], dtype=np.float64)
    return weights / float(weights.sum())


def ranking_figures(
    questions: Sequence[Question], weights: NDArray[np.float64]
) -> dict[str, float]:
    """Over the questions: hit@1 and hit@3 and MRR of the first rationale, recall@5, @10 and
    @25 and mean average precision of all of them."""
    sums = dict.fromkeys(("hit_at_1", "hit_at_3", "recall_at_5", "recall_at_10"), 0.0)
    sums.update(dict.fromkeys(("recall_at_25", "map", "mrr"), 0.0))
    usable = [q for q in questions if q.positive.any()]
    for q in usable:
        order = np.argsort(-(q.parts @ weights), kind="stable")
        ranked = q.positive[order]
        first = int(np.argmax(ranked))
        total = float(ranked.sum())
        sums["hit_at_1"] += float(first < 1)
        sums["hit_at_3"] += float(first < 3)
        for k in (5, 10, 25):
            sums[f"recall_at_{k}"] += float(ranked[:k].sum()) / total
        at = np.flatnonzero(ranked)
        sums["map"] += float((np.arange(1, len(at) + 1) / (at + 1)).mean())
        sums["mrr"] += 1.0 / (first + 1)
    n = max(len(usable), 1)
    return {"questions": len(usable), **{k: round(v / n, 4) for k, v in sums.items()}}


def matched_threshold(
    questions: Sequence[Question], weights: NDArray[np.float64], hand_floor: float = HAND_OFF_TOPIC
) -> float:
    """The off-topic floor on the fitted scale: the score above which the same share of
    rationale sentences passes as passed the hand weights' floor. A weighted sum with other
    weights has another spread, so the old floor would drop rationales it used to keep."""
    parts = np.vstack([q.parts for q in questions])
    positive = np.concatenate([q.positive for q in questions])
    kept = float((parts[positive] @ hand_weights() >= hand_floor).mean())
    return float(np.quantile(parts[positive] @ weights, 1.0 - kept))


def hand_weights() -> NDArray[np.float64]:
    parts = RelevanceWeights().parts()
    w: NDArray[np.float64] = np.array([parts[p] for p in PARTS], dtype=np.float64)
    return w / float(w.sum())


def cross_validate(
    questions: Sequence[Question], folds: dict[int, int], k: int = 5
) -> dict[str, dict[str, float]]:
    """Each fold ranked by weights fitted on the others, and by the hand weights."""
    held: list[Question] = []
    fitted_scores: list[dict[str, float]] = []
    for fold in range(k):
        train = [q for q in questions if folds.get(q.claim_id, -1) != fold]
        test = [q for q in questions if folds.get(q.claim_id, -1) == fold]
        if not test:
            continue
        fitted_scores.append({**ranking_figures(test, fit(train)), "n": len(test)})
        held.extend(test)
    total = sum(f["n"] for f in fitted_scores) or 1
    learned = {
        key: round(sum(f[key] * f["n"] for f in fitted_scores) / total, 4)
        for key in fitted_scores[0]
        if key not in ("n", "questions")
    }
    return {"learned": learned, "hand": ranking_figures(held, hand_weights())}


def run(
    directory: Path,
    out: Path,
    encode: Encode,
    skip: int = 100,
    libraries: Sequence[tuple[Path, Path]] = (),
    log: Log = print,
) -> dict[str, object]:
    """Build, cross-validate, fit on everything, measure on the ``libraries`` (benchmark
    folder, documents folder) and write ``out`` (weights + figures)."""
    questions = build(directory, encode, skip=skip, log=log)
    ood = {lib.name: library_lists(lib, docs, encode) for lib, docs in libraries}
    return write_record(questions, directory, out, skip, ood, log)


def write_record(
    questions: Sequence[Question],
    directory: Path,
    out: Path,
    skip: int,
    ood: dict[str, list[Question]],
    log: Log = print,
) -> dict[str, object]:
    claims = [c for c in load_claims(directory, "train") if c.rationales]
    figures = cross_validate(questions, grouped_folds(claims))
    weights = fit(questions)
    record: dict[str, object] = {
        "weights": {p: round(float(w), 4) for p, w in zip(PARTS, weights, strict=True)},
        "off_topic": round(matched_threshold(questions, weights), 4),
        "data": {
            "claims": len(questions),
            "candidates": int(sum(len(q.positive) for q in questions)),
            "rationales": int(sum(int(q.positive.sum()) for q in questions)),
            "skipped_first": skip,
        },
        "held_out": figures,
        "out_of_domain": {
            name: {
                "candidates": int(sum(len(q.positive) for q in lists)),
                "positives": int(sum(int(q.positive.sum()) for q in lists)),
                "hand": ranking_figures(lists, hand_weights()),
                "fitted": ranking_figures(lists, weights),
            }
            for name, lists in ood.items()
        },
        "hand_weights": {p: round(float(w), 4) for p, w in zip(PARTS, hand_weights(), strict=True)},
        "command": f"manage.py train_relevance --scifact <SciFact folder> --skip {skip}"
        + (" --library <benchmark folder> <documents folder>" * len(ood)),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    log(json.dumps(record, indent=1))
    return record
