"""Train and measure the learned sentence-role classifier (``manage.py train_roles``).

1. **Labels from the data.** In SciFact's structured abstracts a section heading opens the
   first sentence of its section ("BACKGROUND …", "OBJECTIVE:", "METHODS AND RESULTS").
   :func:`read_heading` finds it (a run of heading words in capitals at the sentence's
   start), :func:`heading_role` maps it to one of five roles, and every following sentence
   takes that role until the next heading. A heading whose words name two roles ("METHODS
   AND RESULTS", "BACKGROUND & AIMS") or none of the five ("SUMMARY", "FUNDING",
   "UNLABELLED") drops its section; sentences before the first heading are dropped too.
   The heading words are stripped from the text the model sees.
2. **Split by abstract**: sha256 of ``"<seed>:<doc_id>"`` decides (20 % held out), so no
   abstract is on both sides.
3. **Features**: the product's sentence encoder (all-MiniLM-L6-v2, int8 ONNX), the sentence
   text only (no position: the product reads sentences of any document).
4. **Model**: multinomial logistic regression (scikit-learn, lbfgs); ``C`` and class
   weighting chosen by grouped cross-validation on the training abstracts alone.
5. **Measure** on the held-out abstracts: per-role precision / recall / F1 and macro-F1 of
   the model and of today's regexes (``claims.roles.classify_sentence`` on the same stripped
   sentence, no label; its roles mapped by :data:`REGEX_TO_ROLE`), and finding-vs-not F1.
6. **Out of domain**: a seeded sample of sentences of other documents, predictions shown,
   never used to choose anything.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from research.pipeline.claims import roles as regex_roles
from research.pipeline.language.roles_model import (
    FINDING_ROLES,
    MANIFEST,
    ROLES,
    WEIGHTS,
    Encoder,
    RolesModel,
)
from research.pipeline.language.sentences import split_sentences
from research.providers.base import file_sha256

SEED = 23
HELD_OUT_SHARE = 0.2
CV_FOLDS = 4
C_GRID = (0.5, 2.0, 8.0, 32.0)
WEIGHTINGS = ("none", "balanced")
NONE = ""  # a regex role that is none of the five (fragment, boilerplate, question)

# Each heading word and the role it names; "" for a heading that names none of the five
# (its section is dropped). Modifiers only qualify a heading word ("MAIN OUTCOME MEASURES").
_HEADINGS = {
    "background": "BACKGROUND BACKGROUNDS INTRODUCTION CONTEXT RATIONALE IMPORTANCE MOTIVATION",
    "aim": "OBJECTIVE OBJECTIVES AIM AIMS PURPOSE PURPOSES GOAL GOALS",
    "method": "METHOD METHODS METHODOLOGY MATERIAL MATERIALS DESIGN DESIGNS SETTING SETTINGS "
    "PARTICIPANTS PATIENTS SUBJECTS POPULATION INTERVENTION INTERVENTIONS MEASUREMENT "
    "MEASUREMENTS MEASURE MEASURES OUTCOME OUTCOMES EXPOSURE EXPOSURES SOURCES SELECTION "
    "EXTRACTION CRITERIA SEARCH STRATEGY COLLECTION ANALYSIS",
    "result": "RESULT RESULTS FINDING FINDINGS",
    "conclusion": "CONCLUSION CONCLUSIONS INTERPRETATION IMPLICATIONS SIGNIFICANCE RELEVANCE",
    "": "SUMMARY DISCUSSION UNLABELLED FUNDING TRIAL REGISTRATION LIMITATIONS AVAILABILITY "
    "IMPLEMENTATION SYNTHESIS EVIDENCE ACQUISITION HYPOTHESIS HYPOTHESES QUESTION "
    "APPROACH RECOMMENDATIONS DISCLAIMER",
    "modifier": "AND OF THE & MAIN PRINCIPAL KEY RECENT STUDY DATA RESEARCH EXPERIMENTAL "
    "GENERAL REVIEW CLINICAL PRIMARY SECONDARY",
}
HEADING_WORDS = {
    w: role for role, names in _HEADINGS.items() if role != "modifier" for w in names.split()
}
MODIFIERS = frozenset(_HEADINGS["modifier"].split())
_CONNECTORS = frozenset({"AND", "OF", "THE", "&"})
_HEADING_TOKEN = re.compile(r"([A-Z]{2,}|&)(?![A-Za-z])[\s,/:&.-]*")
# Two or more words in capitals before a word in lower case: a heading this table does not
# know ("COMPARISON WITH EXISTING METHOD The …", "AUTHORS' CONCLUSIONS NRT …"); its section
# is dropped. One word in capitals is an acronym ("COPD is …").
_UNKNOWN_HEADING = re.compile(r"^(?:[A-Z][A-Z']+[\s,:/]+){2,}(?=[A-Z]?[a-z0-9(])")

# Today's regex roles read as the five (the product mines result, conclusion and statement).
REGEX_TO_ROLE = {
    regex_roles.RESULT: "result",
    regex_roles.CONCLUSION: "conclusion",
    regex_roles.STATEMENT: "result",
    regex_roles.METHOD: "method",
    regex_roles.DESIGN: "method",
    regex_roles.AIM: "aim",
    regex_roles.BACKGROUND: "background",
    regex_roles.BOILERPLATE: NONE,
    regex_roles.QUESTION: NONE,
    regex_roles.FRAGMENT: NONE,
}

# Navigation and pointer sentences written for the out-of-domain sample (not from SciFact,
# never used to choose anything): a finding classifier should not call them findings.
PROBES = (
    "See the documentation of those projects for details.",
    "For more information, see the installation guide.",
    "The rest of this document describes the proposed API in detail.",
    "Questions about this policy can be sent to the open source team.",
)


@dataclass(frozen=True)
class Labelled:
    doc_id: int
    index: int  # the sentence's position in its abstract (for the record, never a feature)
    text: str  # heading words stripped
    role: str
    heading: str


@dataclass
class LabelCounts:
    structured_abstracts: int = 0
    abstracts: int = 0  # with at least one labelled sentence
    sentences: Counter[str] = field(default_factory=Counter)
    abstracts_per_role: Counter[str] = field(default_factory=Counter)
    headings: Counter[str] = field(default_factory=Counter)
    dropped_headings: Counter[str] = field(default_factory=Counter)
    dropped_sentences: int = 0  # under a dropped heading
    before_first_heading: int = 0
    heading_only: int = 0  # a "sentence" that is the heading alone

    def to_json(self) -> dict[str, Any]:
        return {
            "structured_abstracts": self.structured_abstracts,
            "abstracts": self.abstracts,
            "sentences": {r: self.sentences[r] for r in ROLES},
            "sentences_total": sum(self.sentences.values()),
            "abstracts_per_role": {r: self.abstracts_per_role[r] for r in ROLES},
            "dropped_headings": dict(self.dropped_headings.most_common()),
            "dropped_sentences": self.dropped_sentences,
            "before_first_heading": self.before_first_heading,
            "heading_only": self.heading_only,
            "headings": dict(self.headings.most_common()),
        }


# --- 1. labels ----------------------------------------------------------------------------


def read_heading(sentence: str) -> tuple[str, str] | None:
    """``(heading, rest)`` when the sentence opens with a section heading, else None.

    The heading is the longest run of heading words and modifiers in capitals at the start
    that holds at least one heading word and does not end on a connector; a run of capitals
    this table does not know (:data:`_UNKNOWN_HEADING`), alone or after it, joins it and
    makes it unknown (``?`` in the heading, which :func:`heading_role` drops)."""
    position, words, end, named = 0, [], 0, False
    while match := _HEADING_TOKEN.match(sentence, position):
        word = match.group(1)
        if word not in HEADING_WORDS and word not in MODIFIERS:
            break
        words.append(word)
        position = match.end()
        named = named or word in HEADING_WORDS
        if named and word not in _CONNECTORS:
            end = len(words)
    cut = 0
    for word in words[:end]:
        cut = sentence.index(word, cut) + len(word)
    rest = sentence[cut:].lstrip(" \t,/:&.-")
    unknown = _UNKNOWN_HEADING.match(rest)
    if unknown:
        words[end:] = [*unknown.group(0).split(), "?"]
        end = len(words)
        rest = rest[unknown.end() :]
    if not end:
        return None
    return " ".join(words[:end]), rest


def heading_role(heading: str) -> str:
    """The one role a heading's words name; '' when they name two, or none of the five."""
    if "?" in heading.split():
        return ""
    named = {HEADING_WORDS[w] for w in heading.split() if w in HEADING_WORDS}
    return named.pop() if len(named) == 1 else ""


def label_abstract(doc_id: int, sentences: Sequence[str], counts: LabelCounts) -> list[Labelled]:
    """Each sentence of one structured abstract under its heading's role."""
    found: list[Labelled] = []
    heading, role = "", None
    for index, text in enumerate(_pieces(sentences)):
        read = read_heading(text)
        if read:
            heading, text = read
            role = heading_role(heading)
            counts.headings[heading] += 1
            if not role:
                counts.dropped_headings[heading] += 1
        if not text:
            counts.heading_only += 1
        elif role is None:
            counts.before_first_heading += 1
        elif not role:
            counts.dropped_sentences += 1
        else:
            found.append(Labelled(doc_id, index, text, role, heading))
    return found


def _pieces(sentences: Sequence[str]) -> list[str]:
    """The corpus's sentences, whitespace collapsed, cut where its splitter left a heading
    inside one ("… in the U.S. RESULTS We …"): the product's splitter cuts it, and a part
    that opens with a heading starts a new piece."""
    pieces: list[str] = []
    for raw in sentences:
        text = " ".join(raw.split())
        parts = [text[a:b] for a, b in split_sentences(text)] or [text]
        pieces.append(parts[0])
        for part in parts[1:]:
            if read_heading(part):
                pieces.append(part)
            else:
                pieces[-1] += " " + part
    return pieces


def load_labels(scifact: Path) -> tuple[list[Labelled], LabelCounts]:
    """Every labelled sentence of the structured abstracts of ``corpus.jsonl``."""
    counts = LabelCounts()
    labelled: list[Labelled] = []
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if not row.get("structured"):
                continue
            counts.structured_abstracts += 1
            found = label_abstract(int(row["doc_id"]), row["abstract"], counts)
            labelled += found
            counts.abstracts += bool(found)
            counts.sentences.update(s.role for s in found)
            counts.abstracts_per_role.update({s.role for s in found})
    return labelled, counts


# --- 2. split -----------------------------------------------------------------------------


def is_held_out(doc_id: int, seed: int = SEED) -> bool:
    digest = hashlib.sha256(f"{seed}:{doc_id}".encode()).hexdigest()
    return int(digest[:8], 16) / 0x1_0000_0000 < HELD_OUT_SHARE


def split(labelled: Sequence[Labelled], seed: int = SEED) -> tuple[list[int], list[int]]:
    """Row indices of the training and the held-out abstracts' sentences."""
    train = [i for i, s in enumerate(labelled) if not is_held_out(s.doc_id, seed)]
    test = [i for i, s in enumerate(labelled) if is_held_out(s.doc_id, seed)]
    return train, test


# --- 3. features --------------------------------------------------------------------------


def features(texts: Sequence[str], encoder: Encoder, work: Path) -> NDArray[np.float32]:
    """The encoder's vectors of ``texts``, cached in ``work`` under a hash of both."""
    key = hashlib.sha256("\n".join([encoder.label, *texts]).encode()).hexdigest()[:16]
    cached = work / f"features-{key}.npy"
    if cached.is_file():
        return np.asarray(np.load(cached, allow_pickle=False), dtype=np.float32)
    vectors = encoder.encode(list(texts))
    work.mkdir(parents=True, exist_ok=True)
    np.save(cached, vectors)
    return vectors


# --- 4. model -----------------------------------------------------------------------------


def fit(x: NDArray[np.float32], y: Sequence[str], c: float, weighting: str) -> Any:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(
        C=c,
        class_weight="balanced" if weighting == "balanced" else None,
        max_iter=5000,
        random_state=SEED,
    )
    model.fit(x, list(y))
    return model


def choose(
    x: NDArray[np.float32], y: Sequence[str], groups: Sequence[int], log: Callable[[str], None]
) -> tuple[float, str, list[dict[str, Any]]]:
    """``C`` and weighting with the best grouped cross-validated macro-F1 (training only)."""
    from sklearn.model_selection import GroupKFold

    folds = list(GroupKFold(n_splits=CV_FOLDS).split(x, list(y), list(groups)))
    labels = np.asarray(y)
    table: list[dict[str, Any]] = []
    for c in C_GRID:
        for weighting in WEIGHTINGS:
            predicted = np.empty(len(labels), dtype=object)
            for train, test in folds:
                predicted[test] = fit(x[train], labels[train], c, weighting).predict(x[test])
            macro = scores(list(labels), [str(p) for p in predicted])["macro_f1"]
            table.append({"C": c, "weighting": weighting, "cv_macro_f1": round(macro, 4)})
            log(f"  C={c:<5} {weighting:<8} cv macro-F1 {macro:.4f}")
    best = max(table, key=lambda row: (row["cv_macro_f1"], -row["C"]))
    return float(best["C"]), str(best["weighting"]), table


def to_roles_model(model: Any, encoder_label: str, source: Path) -> RolesModel:
    """The scikit-learn model as the product's :class:`RolesModel` (rows in ROLES order)."""
    order = [list(model.classes_).index(role) for role in ROLES]
    coef = np.asarray(model.coef_, dtype=np.float64)[order]
    intercept = np.asarray(model.intercept_, dtype=np.float64)[order]
    return RolesModel(ROLES, coef, intercept, encoder_label, source)


def write_weights(model: RolesModel, out: Path, provenance: dict[str, Any]) -> Path:
    """``roles.npz`` (float32 arrays) and ``roles.json`` (roles, encoder, sha256, provenance)."""
    out.mkdir(parents=True, exist_ok=True)
    weights = out / WEIGHTS
    np.savez(
        weights,
        coef=model.coef.astype(np.float32),
        intercept=model.intercept.astype(np.float32),
    )
    manifest = {
        "roles": list(model.roles),
        "encoder": model.encoder,
        "weights_sha256": file_sha256(weights),
        **provenance,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return weights


# --- 5. measures --------------------------------------------------------------------------


def scores(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Per-role precision / recall / F1 over the five roles, macro-F1, accuracy, coverage
    (share predicted as one of the five) and finding-vs-not F1 (result or conclusion)."""
    per_role: dict[str, dict[str, float]] = {}
    for role in ROLES:
        per_role[role] = _prf(
            sum(g == role and p == role for g, p in zip(gold, predicted, strict=True)),
            sum(p == role for p in predicted),
            sum(g == role for g in gold),
        )
    finding = _prf(
        sum(
            g in FINDING_ROLES and p in FINDING_ROLES for g, p in zip(gold, predicted, strict=True)
        ),
        sum(p in FINDING_ROLES for p in predicted),
        sum(g in FINDING_ROLES for g in gold),
    )
    n = max(len(gold), 1)
    return {
        "per_role": per_role,
        "macro_f1": float(np.mean([per_role[r]["f1"] for r in ROLES])),
        "accuracy": sum(g == p for g, p in zip(gold, predicted, strict=True)) / n,
        "coverage": sum(p in ROLES for p in predicted) / n,
        "finding": finding,
        "sentences": len(gold),
    }


def _prf(hits: int, predicted: int, gold: int) -> dict[str, float]:
    precision = hits / predicted if predicted else 0.0
    recall = hits / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "support": float(gold)}


def regex_predictions(texts: Iterable[str]) -> list[str]:
    """Today's ``classify_sentence`` role of each text, no structure label given."""
    return [regex_roles.classify_sentence(t).role for t in texts]


def table(figures: dict[str, dict[str, Any]]) -> list[str]:
    """Per-role and summary lines, one column per system, for the log and the docs."""
    names = list(figures)
    lines = ["| role | " + " | ".join(f"{n} P / R / F1" for n in names) + " | support |"]
    lines.append("|---" * (len(names) + 2) + "|")
    for role in ROLES:
        cells = [_cell(figures[n]["per_role"][role]) for n in names]
        support = int(figures[names[0]]["per_role"][role]["support"])
        lines.append(f"| {role} | " + " | ".join(cells) + f" | {support} |")
    for key in ("macro_f1", "accuracy", "coverage"):
        lines.append(f"| {key} | " + " | ".join(f"{figures[n][key]:.3f}" for n in names) + " | |")
    cells = [_cell(figures[n]["finding"]) for n in names]
    support = int(figures[names[0]]["finding"]["support"])
    lines.append("| finding vs not | " + " | ".join(cells) + f" | {support} |")
    return lines


def _cell(row: dict[str, float]) -> str:
    return f"{row['precision']:.3f} / {row['recall']:.3f} / **{row['f1']:.3f}**"


# --- 6. out of domain ---------------------------------------------------------------------


def document_sentences(folders: Sequence[Path]) -> list[tuple[str, str]]:
    """``(file name, sentence)`` of prose-looking sentences (6–60 words, no markup line)."""
    found: list[tuple[str, str]] = []
    for folder in folders:
        for path in sorted(folder.glob("*")):
            if path.suffix not in (".md", ".rst", ".html", ".txt") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for start, end in split_sentences(text):
                sentence = " ".join(text[start:end].split())
                if _prose(sentence):
                    found.append((path.name, sentence))
    return found


def _prose(sentence: str) -> bool:
    words = sentence.split()
    return (
        6 <= len(words) <= 60
        and sentence[0].isupper()
        and not re.search(r"[<>`|{}=#*_\[\]]|\.\.\s|^\W", sentence)
    )


def out_of_domain(
    folders: Sequence[Path], model: RolesModel, encoder: Encoder, sample: int, seed: int = SEED
) -> dict[str, Any]:
    """The model's and the regexes' roles on other documents: all of them counted, a
    seeded sample and the :data:`PROBES` shown."""
    rows = document_sentences(folders)
    if not rows:
        return {"sentences": 0, "sample": []}
    texts = [s for _, s in rows]
    learned = model.classify(texts, encoder)
    regex = [REGEX_TO_ROLE[r] for r in regex_predictions(texts)]
    picked = sorted(random.Random(seed).sample(range(len(rows)), min(sample, len(rows))))
    probes = model.classify(list(PROBES), encoder)
    probe_regex = regex_predictions(PROBES)
    shown = [
        _ood_row(rows[i][0], texts[i], learned[i], regex_predictions([texts[i]])[0]) for i in picked
    ]
    shown += [
        _ood_row("(probe)", t, p, r) for t, p, r in zip(PROBES, probes, probe_regex, strict=True)
    ]
    return {
        "sentences": len(rows),
        "files": len({name for name, _ in rows}),
        "learned_roles": dict(Counter(role for role, _ in learned).most_common()),
        "regex_roles": dict(Counter(r or "none" for r in regex).most_common()),
        "learned_finding_share": sum(r in FINDING_ROLES for r, _ in learned) / len(rows),
        "regex_finding_share": sum(r in FINDING_ROLES for r in regex) / len(rows),
        "agreement": sum(a == b for (a, _), b in zip(learned, regex, strict=True)) / len(rows),
        "sample": shown,
    }


def _ood_row(name: str, text: str, learned: tuple[str, float], regex: str) -> dict[str, Any]:
    return {
        "file": name,
        "sentence": text,
        "learned": learned[0],
        "p": round(learned[1], 3),
        "regex": regex,
    }


# --- the command --------------------------------------------------------------------------


def run(
    scifact: Path,
    work: Path,
    out: Path,
    encoder: Encoder,
    ood: Sequence[Path] = (),
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Label, split, encode, choose, fit, measure, write weights and ``training.json``."""
    started = time.perf_counter()
    labelled, counts = load_labels(scifact)
    train, test = split(labelled)
    held_abstracts = len({labelled[i].doc_id for i in test})
    log(
        f"labels: {sum(counts.sentences.values())} sentences of {counts.abstracts} abstracts;"
        f" train {len(train)}, held out {len(test)} ({held_abstracts} abstracts)"
    )
    clock = time.perf_counter()
    x = features([s.text for s in labelled], encoder, work)
    encode_s = time.perf_counter() - clock
    y = np.asarray([s.role for s in labelled])
    clock = time.perf_counter()
    c, weighting, grid = choose(x[train], list(y[train]), [labelled[i].doc_id for i in train], log)
    cv_s = time.perf_counter() - clock
    clock = time.perf_counter()
    fitted = fit(x[train], list(y[train]), c, weighting)
    fit_s = time.perf_counter() - clock
    model = to_roles_model(fitted, encoder.label, out / WEIGHTS)
    gold = list(y[test])
    held = _held_out_figures(model, fitted, x[test], [labelled[i].text for i in test], gold)
    for line in table({"learned": held["learned"], "regex": held["regex"]}):
        log(line)
    figures: dict[str, Any] = {
        "labels": counts.to_json(),
        "split": {
            "seed": SEED,
            "held_out_share": HELD_OUT_SHARE,
            "train": len(train),
            "held_out": len(test),
            "held_out_abstracts": held_abstracts,
        },
        "choice": {"C": c, "weighting": weighting, "grid": grid, "folds": CV_FOLDS},
        "held_out": held,
        "seconds": {"encode": round(encode_s, 1), "cv": round(cv_s, 1), "fit": round(fit_s, 1)},
    }
    provenance = {
        "data": "SciFact corpus.jsonl (CC BY 4.0), structured abstracts",
        "data_sha256": file_sha256(scifact / "corpus.jsonl"),
        "seed": SEED,
        "C": c,
        "weighting": weighting,
        "held_out_macro_f1": round(held["learned"]["macro_f1"], 4),
    }
    write_weights(model, out, provenance)
    shipped = RolesModel.load(out)
    figures["ood"] = out_of_domain(ood, shipped, encoder, sample=30) if ood else {}
    figures["seconds"]["total"] = round(time.perf_counter() - started, 1)
    (work / "training.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {out / WEIGHTS} and {work / 'training.json'} in {figures['seconds']['total']} s")
    return figures


def _held_out_figures(
    model: RolesModel, fitted: Any, x: NDArray[np.float32], texts: list[str], gold: list[str]
) -> dict[str, Any]:
    probs = model.probabilities(x)
    learned = [ROLES[int(i)] for i in probs.argmax(axis=1)]
    reference = fitted.predict_proba(x)[:, [list(fitted.classes_).index(r) for r in ROLES]]
    clock = time.perf_counter()
    raw = regex_predictions(texts)
    regex_s = time.perf_counter() - clock
    mapped = [REGEX_TO_ROLE[r] for r in raw]
    confusion = Counter(zip(raw, gold, strict=True))
    return {
        "learned": scores(gold, learned),
        "regex": scores(gold, mapped),
        "regex_raw_by_gold": {r: {g: confusion[(r, g)] for g in ROLES} for r in regex_roles.ROLES},
        "numpy_vs_sklearn_max_diff": float(np.abs(probs - reference).max()),
        "regex_ms_per_sentence": round(1000 * regex_s / max(len(texts), 1), 3),
        "learned_mean_top_p": float(probs.max(axis=1).mean()),
    }
