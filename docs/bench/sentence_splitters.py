"""Our sentence splitter against pysbd and syntok on SciFact's gold sentence boundaries.

Issue 23 ("consider maintained libraries and measure before choosing"). A standalone
script: it imports :func:`research.pipeline.language.sentences.split_sentences` (pure
Python, no Django) by putting the repository on ``sys.path``, and runs in a scratch
virtual environment so that nothing is installed into the project's ``.venv``::

    python3.11 -m venv /tmp/splitvenv
    /tmp/splitvenv/bin/pip install pysbd syntok
    /tmp/splitvenv/bin/pip install spacy    # optional: adds spaCy's rule-based sentencizer
    cd /work/main
    nice -n 10 /tmp/splitvenv/bin/python docs/bench/sentence_splitters.py \\
        --corpus ../shared/data/scifact/corpus.jsonl
    rm -rf /tmp/splitvenv

Each abstract's text is what the product stores as a SciFact record's body:
``ledger/services/corpus.py``'s ``scifact_body`` joins the sentences, each stripped, with
one space, and ``research/pipeline/extract.py``'s ``corpus_document`` / ``_Builder.add``
then drops control characters (``_CONTROL``) and strips the result (the stored text puts
the title and a blank line before it; the title has no gold sentence, so it is left out
here). Gold sentences are found in that text as ``scifact_sentence_spans`` finds them
(the control-stripped, stripped sentence, searched from the previous one's end; empty
ones skipped).

A boundary is the end offset of each sentence but the last (predicted sentences are
whitespace-trimmed first). A predicted boundary is correct when it lies in the gap
between two gold sentences (gold sentence i's end to sentence i+1's start, inclusive);
a gold boundary is found when some predicted boundary lies in its gap. Precision and
recall are pooled over all abstracts, then again without the few abstracts that hold a
table of contents' dot leader (". . . ."), where the gold "sentences" are single dots.
The time is each splitter's best of ``--repeats`` passes over every abstract, including
the mapping of its output to character offsets.
Prints the two markdown tables, why ours missed what it missed (by kind), and error
examples (``--examples`` per splitter, half false splits and half missed splits, evenly
spaced over the abstracts without a dot leader).
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import platform
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from research.pipeline.language.sentences import split_sentences  # noqa: E402

# research/pipeline/extract.py: the control characters every extracted text loses.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")

# A table of contents' dot leader (". . . ."): SciFact's gold splits it at every dot.
DOT_LEADER = ". . . ."

Span = tuple[int, int]
Splitter = Callable[[str], list[Span]]


def body_and_gold(abstract: list[str]) -> tuple[str, list[Span]]:
    """The stored body of a SciFact record and its gold sentences' offsets in it."""
    body = _CONTROL.sub("", " ".join(sentence.strip() for sentence in abstract)).strip()
    spans: list[Span] = []
    cursor = 0
    for sentence in abstract:
        piece = _CONTROL.sub("", sentence).strip()
        if not piece:
            continue
        at = body.find(piece, cursor)
        if at < 0:
            raise ValueError(f"gold sentence not found in the body: {piece[:60]!r}")
        spans.append((at, at + len(piece)))
        cursor = at + len(piece)
    return body, spans


def trimmed(text: str, spans: list[Span]) -> list[Span]:
    out = []
    for start, end in spans:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append((start, end))
    return out


def ours(text: str) -> list[Span]:
    return split_sentences(text)


def make_pysbd() -> Splitter:
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def split(text: str) -> list[Span]:
        return [(span.start, span.end) for span in segmenter.segment(text)]

    return split


def make_syntok() -> Splitter:
    from syntok import segmenter

    def split(text: str) -> list[Span]:
        return [
            (sentence[0].offset, sentence[-1].offset + len(sentence[-1].value))
            for paragraph in segmenter.analyze(text)
            for sentence in paragraph
        ]

    return split


def make_spacy() -> Splitter:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")

    def split(text: str) -> list[Span]:
        return [(sent.start_char, sent.end_char) for sent in nlp(text).sents]

    return split


def splitters() -> Iterator[tuple[str, Splitter]]:
    yield "ours (split_sentences)", ours
    yield "pysbd", make_pysbd()
    yield "syntok", make_syntok()
    try:
        yield "spaCy sentencizer (rule-based, no model)", make_spacy()
    except ImportError:
        print("spaCy not installed: its sentencizer is skipped", file=sys.stderr)


@dataclass
class Score:
    predicted: int = 0
    correct: int = 0
    gold: int = 0
    found: int = 0
    lost_chars: int = 0  # text outside every predicted span (a splitter dropping text)
    false_splits: list[str] = field(default_factory=list)
    missed_splits: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def context(text: str, at: int, width: int = 45) -> str:
    left = " ".join(text[max(0, at - width) : at].split())
    right = " ".join(text[at : at + width].split())
    return f"…{left} ‖ {right}…"


def score(result: Score, doc_id: object, text: str, gold: list[Span], spans: list[Span]) -> None:
    gaps = [(gold[i][1], gold[i + 1][0]) for i in range(len(gold) - 1)]
    gap_starts = [start for start, _ in gaps]
    predicted = [end for _, end in spans[:-1]]
    result.gold += len(gaps)
    result.predicted += len(predicted)
    result.lost_chars += sum(not c.isspace() for c in text) - sum(
        not c.isspace() for start, end in spans for c in text[start:end]
    )
    found = set()
    for at in predicted:
        index = bisect.bisect_right(gap_starts, at) - 1
        if index >= 0 and gaps[index][0] <= at <= gaps[index][1]:
            result.correct += 1
            found.add(index)
        else:
            result.false_splits.append(f"{doc_id}: {context(text, at)}")
    result.found += len(found)
    for index, (start, _) in enumerate(gaps):
        if index not in found:
            result.missed_splits.append(f"{doc_id}: {context(text, start)}")


_TERMINAL = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")  # _BOUNDARY's end in sentences.py
_START = re.compile(r"[\"'\u201c\u2018(\[]?[A-Z0-9]")  # its lookahead: a plausible start


def why_ours_missed(docs: list[tuple[object, str, list[Span]]]) -> Counter[str]:
    """Why :func:`split_sentences` misses the gold boundaries it misses, by kind."""
    kinds: Counter[str] = Counter()
    for _, text, gold in docs:
        ends = [end for _, end in split_sentences(text)[:-1]]
        for (start, end), (after, _) in itertools.pairwise(gold):
            if any(end <= at <= after for at in ends):
                continue
            if not _TERMINAL.search(text[start:end]):
                kinds["gold boundary not after . ! ? (e.g. inside '1.4 +/- 0.24')"] += 1
            elif not _START.match(text, after):
                first = text[after]
                kinds[
                    "next sentence starts lower-case ('p53', 'mRNA')"
                    if first.islower()
                    else "next sentence starts with another character ('\"', '©', 'β')"
                ] += 1
            else:
                dot = text.rindex(".", start, end)
                tail = re.search(r"[A-Za-z.]*$", text[:dot])
                word = tail.group() if tail else ""
                before = text[dot - len(word) - 1] if dot > len(word) else " "
                kinds[
                    "abbreviation rule on the tail of a longer token ('E2F.', '37°C.', 'ms.')"
                    if not before.isspace() and before not in "([\"'"
                    else "abbreviation rule on a word ('ref.', 'pp.', a single letter)"
                ] += 1
    return kinds


def evenly(items: list[str], count: int) -> list[str]:
    if len(items) <= count:
        return items
    return [items[round(i * (len(items) - 1) / max(1, count - 1))] for i in range(count)]


def table(title: str, rows: list[str]) -> None:
    print(f"{title}\n")
    print("| splitter | P | R | F1 | correct/predicted | found/gold | false splits ", end="")
    print("| missed splits | time per 1,000 abstracts |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows) + "\n")


def row(name: str, result: Score, per_1000: float) -> str:
    return (
        f"| {name} | {result.precision:.4f} | {result.recall:.4f} | {result.f1:.4f} "
        f"| {result.correct}/{result.predicted} | {result.found}/{result.gold} "
        f"| {len(result.false_splits)} | {len(result.missed_splits)} | {per_1000:.2f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, default=ROOT.parent / "shared/data/scifact/corpus.jsonl"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()

    docs = []
    with args.corpus.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                docs.append((record["doc_id"], *body_and_gold(record["abstract"])))
    leaders = {doc_id for doc_id, text, _ in docs if DOT_LEADER in text}
    print(f"{len(docs)} abstracts from {args.corpus}; Python {platform.python_version()}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")

    all_rows, clean_rows, errors = [], [], []
    for name, split in splitters():
        best = float("inf")
        outputs: list[list[Span]] = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            outputs = [split(text) for _, text, _ in docs]
            best = min(best, time.perf_counter() - started)
        everything, clean = Score(), Score()
        for (doc_id, text, gold), spans in zip(docs, outputs, strict=True):
            spans = trimmed(text, spans)
            score(everything, doc_id, text, gold, spans)
            if doc_id not in leaders:
                score(clean, doc_id, text, gold, spans)
        per_1000 = best / len(docs) * 1000
        all_rows.append(row(name, everything, per_1000))
        clean_rows.append(row(name, clean, per_1000))
        half = args.examples // 2
        false = evenly(clean.false_splits, half)
        missed = evenly(clean.missed_splits, args.examples - len(false))
        if len(missed) < args.examples - len(false):
            false = evenly(clean.false_splits, args.examples - len(missed))
        errors.append((name, everything, false, missed))
        print(f"{name}: done in {best:.1f} s (best of {args.repeats})", file=sys.stderr)

    table(f"All {len(docs)} abstracts:", all_rows)
    table(
        f"Without the {len(leaders)} abstracts holding a dot leader ({DOT_LEADER!r}; "
        f"doc_ids {' '.join(map(str, sorted(leaders)))}), where gold splits at each dot:",
        clean_rows,
    )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\nWhy ours missed the gold boundaries it missed (abstracts without a dot leader):\n")
    clean_docs = [doc for doc in docs if doc[0] not in leaders]
    for kind, count in why_ours_missed(clean_docs).most_common():
        print(f"- {count}: {kind}")
    for name, result, false, missed in errors:
        print(f"\n### {name}\n")
        if result.lost_chars:
            print(f"non-space characters outside every predicted span: {result.lost_chars}\n")
        for example in false:
            print(f"- false split: {example}")
        for example in missed:
            print(f"- missed split: {example}")


if __name__ == "__main__":
    main()
