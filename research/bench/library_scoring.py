"""Scoring of ``bench_runs --library-bench``: which gold claims did a run's kept claims find?

Pure: the command hands over each run's kept claims as :class:`MinedClaim` records (the
claim's text, its relevance and its anchor quotes as snapshot offsets) and each gold
claim's quote located in the snapshot of its file (:func:`locate_gold`).

1. A gold quote is located with ``str.find`` in the snapshot text of its file (the text
   ingestion extracted, not the raw file); failing that, with markup set aside on both
   sides (:func:`markup_free`: reStructuredText roles such as ``:envvar:``, the characters
   ````` ``*`` ``_`` and runs of white space), since the gold quotes were copied from the
   raw files and extraction renders their markup as text. A quote found neither way gets
   no span: it *counts as not recovered* (it stays in the denominator) and is reported
   separately as ``gold_not_in_snapshot``, so a low figure can be told apart from a quote
   no claim could ever overlap.
2. A gold claim is *recovered* when an anchor quote of a kept claim is in the same snapshot
   and overlaps the gold quote's span by at least half of the gold quote's characters
   (:data:`MIN_OVERLAP`).
3. ``recall_at_10``: gold claims recovered by the 10 highest-relevance claims, over all gold
   claims (ties keep the ledger's order).
4. A gold claim no kept claim recovers is traced to mining's set-aside candidates
   (:class:`SetAside`, same overlap rule): the reason mining gave for dropping or merging
   the sentence, or none when mining never saw it (not retrieved, or not a sentence of its
   own).
5. The share of claims a reader keeps is not computed here from anything the machine knows:
   only a reader's marks (:func:`reader_share`) give it, and without them it is reported as
   not computed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from research.bench.library_manifest import LibraryQuestion

TOP_K = 10
MIN_OVERLAP = 0.5  # of the gold quote's characters


@dataclass(frozen=True)
class Span:
    snapshot_id: int
    start: int
    end: int


@dataclass(frozen=True)
class MinedClaim:
    text: str
    relevance: float
    anchors: tuple[Span, ...]
    anchor_file: str = ""  # the library file of its first anchor (or the source's title)


@dataclass(frozen=True)
class SetAside:
    """A sentence mining considered and did not keep as a claim of its own."""

    span: Span
    state: str  # dropped or merged
    reason: str


@dataclass(frozen=True)
class RankedResult:
    """One kept claim in relevance order, with the gold claims (1-based) it recovers."""

    rank: int
    claim: MinedClaim
    gold: tuple[int, ...]


@dataclass(frozen=True)
class QuestionResult:
    question: LibraryQuestion
    ranked: tuple[RankedResult, ...]
    located: tuple[Span | None, ...]  # per gold claim: its quote in the snapshot, if found
    wall_s: float
    set_aside: tuple[SetAside | None, ...] = ()  # per gold claim not recovered: why

    def fate(self, number: int) -> str:
        """What became of gold claim ``number`` (1-based), in words."""
        if self.located[number - 1] is None:
            return "quote not in snapshot"
        if number in self.recovered:
            return "yes"
        aside = self.set_aside[number - 1] if self.set_aside else None
        return f"no: {aside.state} at mining ({aside.reason})" if aside else "no: not mined"

    @property
    def recovered(self) -> frozenset[int]:
        return frozenset(n for r in self.ranked for n in r.gold)

    @property
    def recovered_at_10(self) -> frozenset[int]:
        return frozenset(n for r in self.ranked[:TOP_K] for n in r.gold)

    @property
    def not_in_snapshot(self) -> int:
        return sum(1 for span in self.located if span is None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question.question,
            "claims": len(self.ranked),
            "gold": len(self.question.gold),
            "gold_recovered": sorted(self.recovered),
            "gold_recovered_at_10": sorted(self.recovered_at_10),
            "gold_not_in_snapshot": self.not_in_snapshot,
            "gold_fate": [self.fate(n) for n in range(1, len(self.located) + 1)],
            "wall_s": round(self.wall_s, 2),
            "ranked": [
                {
                    "rank": r.rank,
                    "text": r.claim.text,
                    "relevance": round(r.claim.relevance, 4),
                    "anchor_file": r.claim.anchor_file,
                    "gold": list(r.gold),
                }
                for r in self.ranked
            ],
        }


@dataclass(frozen=True)
class ReaderShare:
    kept: int
    marked: int  # claims of these runs the marks file judges
    unmarked: int  # claims of these runs it does not name

    @property
    def share(self) -> float | None:
        return round(self.kept / self.marked, 4) if self.marked else None


_ROLE = re.compile(r":[a-zA-Z][\w.-]*:(?=`)")
_MARKUP = frozenset("`*_")


def markup_free(text: str) -> tuple[str, list[int]]:
    """``text`` without reStructuredText roles, the characters `` ` * _ `` and repeated white
    space, and for each character kept its offset in ``text``."""
    kept: list[str] = []
    where: list[int] = []
    skip_to = 0
    for m in _ROLE.finditer(text):
        for i in range(skip_to, m.start()):
            _keep(text, i, kept, where)
        skip_to = m.end()
    for i in range(skip_to, len(text)):
        _keep(text, i, kept, where)
    return "".join(kept), where


def _keep(text: str, i: int, kept: list[str], where: list[int]) -> None:
    char = text[i]
    if char in _MARKUP:
        return
    if char.isspace():
        if kept and kept[-1] == " ":
            return
        char = " "
    kept.append(char)
    where.append(i)


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in ``text``: exactly, or with markup set aside on both sides."""
    start = text.find(quote)
    if start >= 0:
        return start, start + len(quote)
    plain, where = markup_free(text)
    wanted = markup_free(quote)[0].strip()
    at = plain.find(wanted) if wanted else -1
    if at < 0:
        return None
    return where[at], where[at + len(wanted) - 1] + 1


def locate_gold(
    question: LibraryQuestion, snapshots: Mapping[str, tuple[int, str]]
) -> tuple[Span | None, ...]:
    """Each gold quote's span in the snapshot text of its file (``file -> (id, text)``);
    None where the file has no snapshot or the quote is not found in its text."""
    spans: list[Span | None] = []
    for gold in question.gold:
        snapshot_id, text = snapshots.get(gold.file, (0, ""))
        found = find_quote(text, gold.quote) if snapshot_id else None
        spans.append(Span(snapshot_id, *found) if found else None)
    return tuple(spans)


def recovers(anchor: Span, gold: Span) -> bool:
    shared = min(anchor.end, gold.end) - max(anchor.start, gold.start)
    length = gold.end - gold.start
    return anchor.snapshot_id == gold.snapshot_id and length > 0 and shared >= MIN_OVERLAP * length


def score_question(
    question: LibraryQuestion,
    claims: Sequence[MinedClaim],
    located: tuple[Span | None, ...],
    wall_s: float,
    set_aside: Sequence[SetAside] = (),
) -> QuestionResult:
    ranked = sorted(claims, key=lambda c: -c.relevance)
    results = tuple(
        RankedResult(
            rank,
            claim,
            tuple(
                n
                for n, span in enumerate(located, start=1)
                if span is not None and any(recovers(a, span) for a in claim.anchors)
            ),
        )
        for rank, claim in enumerate(ranked, start=1)
    )
    why = tuple(
        next((a for a in set_aside if span and recovers(a.span, span)), None) for span in located
    )
    return QuestionResult(question, results, located, wall_s, why)


def reader_share(results: Sequence[QuestionResult], marks: Mapping[str, bool]) -> ReaderShare:
    """Claims a reader keeps among those they marked. A mark is keyed by the claim's text
    (``text -> keep``), or by ``"Q<n>: text"`` for question ``n`` alone (it wins: the same
    claim can answer one question and not another); white space runs count as one space."""
    plain = {_spaced(text): keep for text, keep in marks.items()}
    kept = marked = unmarked = 0
    for number, result in enumerate(results, start=1):
        for ranked in result.ranked:
            text = _spaced(ranked.claim.text)
            keep = plain.get(f"Q{number}: {text}", plain.get(text))
            if keep is None:
                unmarked += 1
            else:
                kept, marked = kept + keep, marked + 1
    return ReaderShare(kept, marked, unmarked)


def _spaced(text: str) -> str:
    return " ".join(text.split())


@dataclass
class LibraryFigures:
    results: list[QuestionResult] = field(default_factory=list)

    def figures(self, marks: Mapping[str, bool] | None = None) -> dict[str, Any]:
        n = len(self.results) or 1
        gold = sum(len(r.question.gold) for r in self.results)
        recovered = sum(len(r.recovered) for r in self.results)
        at_10 = sum(len(r.recovered_at_10) for r in self.results)
        share = reader_share(self.results, marks) if marks is not None else None
        return {
            "questions": len(self.results),
            "claims_per_question": round(sum(len(r.ranked) for r in self.results) / n, 2),
            "gold": gold,
            "gold_recovered": recovered,
            "gold_recovered_share": round(recovered / gold, 4) if gold else 0.0,
            "recall_at_10": round(at_10 / gold, 4) if gold else 0.0,
            "gold_not_in_snapshot": sum(r.not_in_snapshot for r in self.results),
            "wall_s_per_question": round(sum(r.wall_s for r in self.results) / n, 2),
            "reader_keeps_share": share.share if share else None,
            "reader_marked": share.marked if share else 0,
            "reader_unmarked": share.unmarked if share else 0,
        }


NO_READER = (
    "Share of claims a reader keeps: **not computed** — the machine cannot judge it. Mark the"
    " `keep?` column (y / n) of each claim, write the marks as JSON (`{claim text: true |"
    " false}`) and pass them to `bench_runs --library-bench … --reader-marks FILE`."
)


def _cell(text: str) -> str:
    return _spaced(text).replace("|", "\\|")


def claims_markdown(title: str, results: Sequence[QuestionResult], header: Sequence[str]) -> str:
    """Each question's kept claims in relevance order with an empty ``keep?`` column, then
    its gold claims and whether they were recovered."""
    lines = [f"# {title}", "", *header, "", NO_READER, ""]
    for number, result in enumerate(results, start=1):
        recovered, at_10 = result.recovered, result.recovered_at_10
        lines += [
            f"## Q{number}. {_cell(result.question.question)}",
            "",
            f"Scope: {_cell(result.question.scope)}",
            "",
            f"{len(result.ranked)} claims; gold recovered {len(recovered)} of"
            f" {len(result.question.gold)} ({len(at_10)} in the top {TOP_K});"
            f" wall {result.wall_s:.1f} s.",
            "",
            "| # | claim | relevance | anchor file | gold | keep? |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.rank} | {_cell(r.claim.text)} | {r.claim.relevance:.3f} |"
            f" {_cell(r.claim.anchor_file)} | {', '.join(f'G{n}' for n in r.gold)} |  |"
            for r in result.ranked
        ]
        lines += ["", "| gold | kind | file | recovered | claim |", "|---|---|---|---|---|"]
        for n, gold in enumerate(result.question.gold, start=1):
            lines.append(
                f"| G{n} | {gold.kind} | {_cell(gold.file)} | {_cell(result.fate(n))} |"
                f" {_cell(gold.claim)} |"
            )
        lines.append("")
    return "\n".join(lines)
