"""The second offline learned family (``align``): word alignment inside one quote window.

The ``learned`` family looks at *sentence* vectors (how close the passage's best sentence
is to the claim as a whole) plus lexical checks. This family looks at *words*: for each
content word of the claim, the closest word of one quote window (one clause, or two
adjacent ones), exact stems counting 1 and other words by the cosine of their MiniLM
vectors (each word encoded on its own, the same encoder and cache as sentences). A
window states a claim when *every* claim word finds a partner there ("reduces" ↔
"lowers", "elderly" ↔ "older"), not when the window is merely about the same topic; the
weakest-aligned claim word (``min``) carries that. Negation, direction, antonym,
"no effect", number and hedge mismatches are read on the best-aligned window and, for
contradiction, on the best-aligned window that has such a conflict.

A multinomial logistic regression over these features (plain JSON weights, one model
per grouped cross-validation fold for out-of-fold benchmarking, Platt-calibrated scores)
votes supports / contradicts / insufficient per passage and quotes the window it read.
Trained by ``manage.py train_verifier --family align`` (docs/verifier.md). Its errors
are not the learned family's (agreement table in docs/bench/verification.md): that is
what makes a quorum of the two mean something.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from research.pipeline.language.direction import (
    CHANGE_CLASSES,
    MORE_DOWN,
    MORE_OPPOSITES,
    MORE_UP,
    NULL_EFFECT,
    RELATION_VERB,
    antonym_clash,
    direction,
    negated,
)
from research.pipeline.language.lexicon import (
    content_words,
    hedges,
    is_meaningful_quote,
    stem,
    words,
)
from research.pipeline.language.quantities import quantities
from research.pipeline.verify.features import item_sentences
from research.pipeline.verify.learned import LinearFamily, LinearModel, VerifierWeights
from research.pipeline.verify.records import ClaimInput, EvidenceItem, Vote, VoteVerdict

if TYPE_CHECKING:
    from numpy.typing import NDArray

ALIGN_WEIGHTS_PATH = Path(__file__).resolve().parent / "weights" / "align_verifier.json"
Encode = Callable[[list[str]], "NDArray[np.float32]"]

WINDOW_NAMES: tuple[str, ...] = (
    "align_mean",
    "align_min",
    "align_min2",
    "exact_share",
    "aligned_07",
    "aligned_05",
    "window_precision",
    "sentence_cos",
    "neg_mismatch",
    "polarity_disagree",
    "polarity_agree",
    "antonym_clash",
    "null_effect",
    "number_match",
    "number_conflict",
    "hedge_dropped",
    "mean_x_negation",
    "mean_x_polarity",
    "mean_x_antonym",
    "mean_x_number",
    "conflict",
    "mean_x_conflict",
    "min_x_no_conflict",
    "roles_swapped",
)
ALIGN_FEATURE_NAMES: tuple[str, ...] = (
    *WINDOW_NAMES,
    "conflict_window_mean",
    "conflict_window_negation",
    "conflict_window_polarity",
    "conflict_window_antonym",
    "conflict_window_number",
    "conflict_window_null_effect",
    "log_windows",
)
# Lookups over research.pipeline.language.direction's MORE_OPPOSITES and CHANGE_CLASSES.
_OPPOSITE: dict[str, str] = {}
for _a, _b in MORE_OPPOSITES:
    _OPPOSITE[_a], _OPPOSITE[_b] = _b, _a
_CHANGE_CLASS = {w: i for i, words_ in enumerate(CHANGE_CLASSES) for w in words_}
_CONFLICT = WINDOW_NAMES.index("conflict")
_SWAPPED = WINDOW_NAMES.index("roles_swapped")
MAX_WINDOW = 2  # clauses per quote window


@dataclass(frozen=True)
class AlignFeatures:
    values: NDArray[np.float64]
    support_window: tuple[int, int]  # offsets into the item text
    conflict_window: tuple[int, int] | None


class ClaimWords:
    """The claim's content words, their vectors and its lexical facts, computed once."""

    def __init__(self, text: str, encode: Encode) -> None:
        self.text = text
        self.words = list(dict.fromkeys(content_words(text)))
        self.stems = [stem(w) for w in self.words]
        self.vectors = encode(self.words) if self.words else np.zeros((0, 384), np.float32)
        self.negated = negated(text)
        self.polarity = polarity(text)
        self.directional = direction(text) != 0 and not self.negated
        self.quantities = quantities(text)
        self.hedges = set(hedges(text))
        self.roles = _roles(text, self.words)


_VERB_LIKE = re.compile(r"(?<=\w )\w+(?:ed|es)\b")  # "Boys outperformed girls"


def _roles(text: str, words: list[str]) -> tuple[int, int] | None:
    """Indices into ``words`` of the claim's subject head (first content word before its
    relation verb) and object head (first one after it), or None."""
    match = RELATION_VERB.search(text) or _VERB_LIKE.search(text)
    if match is None:
        return None
    before = content_words(text[: match.start()])
    after = [w for w in content_words(text[match.end() :]) if w not in before]
    if not before or not after or before[0] not in words or after[0] not in words:
        return None
    return words.index(before[0]), words.index(after[0])


def polarity(text: str) -> int:
    """Direction of the stated effect (:func:`direction`'s words plus :data:`MORE_UP` /
    ``MORE_DOWN``), flipped by negation."""
    ws = words(text)
    up = sum(1 for w in ws if w in MORE_UP)
    down = sum(1 for w in ws if w in MORE_DOWN)
    d = direction(text) + (up > down) - (down > up)
    d = (d > 0) - (d < 0)
    return -d if negated(text) else d


def opposite_words(a: str, b: str) -> bool:
    """An antonym of a word of ``a`` in ``b`` (and not in ``a``), from
    :data:`ANTONYM_PAIRS` or :data:`MORE_OPPOSITES`."""
    if antonym_clash(a, b):
        return True
    wa, wb = set(words(a)), set(words(b))
    return any(w in _OPPOSITE and _OPPOSITE[w] in wb and _OPPOSITE[w] not in wa for w in wa - wb)


def window_features(
    claim: ClaimWords, window: str, sentence_cos: float, encode: Encode
) -> list[float]:
    """The :data:`WINDOW_NAMES` features of one quote window."""
    words = list(dict.fromkeys(content_words(window)))
    if claim.words and words:
        window_stems = {stem(w) for w in words}
        sim = claim.vectors @ encode(words).T  # claim words × window words
        exact = np.array([s in window_stems for s in claim.stems])
        classes = {_CHANGE_CLASS[w] for w in words if w in _CHANGE_CLASS}
        exact |= np.array([_CHANGE_CLASS.get(w, -1) in classes for w in claim.words])
        aligned = np.where(exact, 1.0, sim.max(axis=1))
        precision = float((sim.max(axis=0) >= 0.75).mean())
        swapped = _swapped(claim, words, window_stems, sim, aligned)
    else:
        aligned, exact, precision, swapped = np.zeros(1), np.zeros(1, dtype=bool), 0.0, 0.0
    ranked = np.sort(aligned)
    neg = float(claim.negated != negated(window))
    pol = claim.polarity * polarity(window)
    antonym = float(opposite_words(claim.text, window))
    null = float(claim.directional and bool(NULL_EFFECT.search(window)))
    number_match, number_conflict = _numbers(claim, window)
    hedge_dropped = float(bool(set(hedges(window)) - claim.hedges))
    mean = float(aligned.mean())
    conflict = max(neg, float(pol < 0), antonym, null, number_conflict)
    return [
        mean,
        float(ranked[0]),
        float(ranked[1]) if len(ranked) > 1 else float(ranked[0]),
        float(exact.mean()),
        float((aligned >= 0.7).mean()),
        float((aligned >= 0.5).mean()),
        precision,
        sentence_cos,
        neg,
        float(pol < 0),
        float(pol > 0),
        antonym,
        null,
        number_match,
        number_conflict,
        hedge_dropped,
        mean * neg,
        mean * float(pol < 0),
        mean * antonym,
        mean * number_conflict,
        conflict,
        mean * conflict,
        float(ranked[0]) * (1.0 - conflict),
        swapped,
    ]


def _swapped(
    claim: ClaimWords,
    words: list[str],
    window_stems: set[str],
    sim: NDArray[np.float32],
    aligned: NDArray[np.float64],
) -> float:
    """1.0 when the window names the claim's object before its subject ("B inhibits A"
    for "A inhibits B"), each found by its aligned partner (exact stem first)."""
    if claim.roles is None:
        return 0.0
    places = []
    for k in claim.roles:
        if aligned[k] < 0.7:
            return 0.0
        s = claim.stems[k]
        exact = [i for i, w in enumerate(words) if stem(w) == s] if s in window_stems else []
        places.append(exact[0] if exact else int(np.argmax(sim[k])))
    return float(places[0] > places[1])


def _numbers(claim: ClaimWords, window: str) -> tuple[float, float]:
    """(share of the claim's quantities stated with value and unit, any unit clash);
    (1, 0) for a claim without numbers."""
    if not claim.quantities:
        return 1.0, 0.0
    found = quantities(window)
    exact = {(q.value, q.unit) for q in found}
    by_unit: dict[str, set[float]] = {}
    for q in found:
        by_unit.setdefault(q.unit, set()).add(q.value)
    matched = sum(1 for q in claim.quantities if (q.value, q.unit) in exact)
    clash = any(
        q.unit and q.unit in by_unit and q.value not in by_unit[q.unit] for q in claim.quantities
    )
    return matched / len(claim.quantities), float(clash)


def item_features(
    claim: ClaimWords,
    item: EvidenceItem,
    sentence_vectors: NDArray[np.float32],
    claim_vector: NDArray[np.float32],
    encode: Encode,
) -> AlignFeatures:
    """Features of the passage: its best-aligned window, and its best-aligned window with
    an explicit conflict (for contradictions)."""
    spans = item_sentences(item)
    cos = sentence_vectors @ claim_vector if len(spans) else np.zeros(1)
    best: tuple[float, list[float], tuple[int, int]] | None = None
    clash: tuple[float, list[float], tuple[int, int]] | None = None
    windows = 0
    for i in range(len(spans)):
        for j in range(i, min(i + MAX_WINDOW, len(spans))):
            start, end = spans[i][0], spans[j][1]
            window = item.text[start:end]
            windows += 1
            feats = window_features(claim, window, float(cos[i : j + 1].max()), encode)
            key = feats[0] + 0.05 * feats[7] - 0.02 * (j - i)
            if is_meaningful_quote(window) and (best is None or key > best[0]):
                best = (key, feats, (start, end))
            if feats[_CONFLICT] > 0 and (clash is None or feats[0] > clash[0]):
                clash = (feats[0], feats, (start, end))
    if best is None:  # nothing quotable: features of the whole text, no quote
        feats = window_features(claim, item.text, float(cos.max()), encode)
        best = (0.0, feats, (0, 0))
    c = clash[1] if clash else [0.0] * len(WINDOW_NAMES)
    mean = c[0]
    values = [
        *best[1],
        mean,
        mean * c[8],
        mean * c[9],
        mean * c[11],
        mean * c[14],
        mean * c[12],
        float(np.log1p(windows)),
    ]
    return AlignFeatures(np.asarray(values, dtype=np.float64), best[2], clash[2] if clash else None)


# Every claim word needs a partner this close in the window (its own stem counts 1.0):
# "lowered" for "reduced" passes, "children" for "adults" (0.56), "maize" for "wheat"
# (0.63) and "trucks" for "cars" (0.75) do not — a near miss is one word away.
MIN_WORD_ALIGNMENT = 0.8
_MIN = WINDOW_NAMES.index("align_min")


def support_vetoed(values: NDArray[np.float64]) -> bool:
    """A strict reader's veto, whatever the model learned from its data: the window never
    supports when a claim word has no close partner in it (:data:`MIN_WORD_ALIGNMENT`),
    when it states an explicit conflict (negation, direction, antonym, "no effect",
    number), or when it has the claim's roles the other way round."""
    return bool(values[_MIN] < MIN_WORD_ALIGNMENT or values[_CONFLICT] > 0 or values[_SWAPPED] > 0)


def alignment_words(claim_text: str, items: Sequence[EvidenceItem]) -> list[str]:
    """Every word :class:`AlignVerifier` will encode for this claim and these passages
    (to encode them ahead with the sentences, in one call)."""
    found = content_words(claim_text)
    for item in items:
        found += content_words(item.text)
    return list(dict.fromkeys(found))


def load_weights(path: Path = ALIGN_WEIGHTS_PATH) -> VerifierWeights:
    return VerifierWeights.load(path, feature_names=ALIGN_FEATURE_NAMES)


class AlignVerifier(LinearFamily):
    """Votes per claim–passage pair from word alignment; quotes the window it read."""

    family = "align"
    name = "align-minilm-words-lr"
    # :func:`support_vetoed` applies (off only for the ablation of ``bench_verification``).
    veto = True

    def judge(self, claim: ClaimInput, items: Sequence[EvidenceItem]) -> list[Vote]:
        if not items:
            return []
        model = self.model_for(claim)
        words = ClaimWords(claim.text, self.encode)
        u, per_item = self.encode_items(claim, items)
        votes = []
        for item, _spans, vectors in per_item:
            feats = item_features(words, item, vectors, u, self.encode)
            p = model.proba(feats.values)[0]
            votes.append(self._vote(claim, item, model, p, feats))
        return votes

    def _vote(
        self,
        claim: ClaimInput,
        item: EvidenceItem,
        model: LinearModel,
        p: NDArray[np.float64],
        feats: AlignFeatures,
    ) -> Vote:
        vetoed = self.veto and support_vetoed(feats.values)
        decision = model.decide(p, may_support=not vetoed)
        window = feats.support_window
        if decision.verdict == VoteVerdict.CONTRADICTS:
            window = feats.conflict_window or window
        quote = item.text[window[0] : window[1]]
        rationale = (
            f"word alignment: every claim word's best partner in the window, mean "
            f"{feats.values[0]:.2f}, weakest {feats.values[1]:.2f}; {decision.summary}"
        )
        return Vote.bind(
            self.name,
            self.family,
            claim,
            item,
            verdict=decision.verdict,
            score=decision.score,
            quote=quote if is_meaningful_quote(quote) else "",
            rationale=rationale,
        )
