"""Audit benchmark (``bench_audit``): generated reports with known faults, imported and checked.

Reports are written the way open_deep_research writes them (Markdown: ``[n]`` markers after
sentences, a ``### Sources`` list of ``[n] Title: URL``), one claim per sentence, from
SciFact train claims whose gold abstract is in the corpus; a cited abstract's URL is
``https://corpus.invalid/doc/<doc id>``. Each claim is one of :data:`FAULTS`, in the
proportions asked (exact counts, placed at seeded positions):

- ``correct``: a SUPPORT claim citing its gold SUPPORT abstract;
- ``wrong-citation``: a SUPPORT claim citing an abstract it does not cite in the data
  (drawn at random from the corpus);
- ``contradicted``: a CONTRADICT claim citing the abstract that contradicts it;
- ``invented-url``: a SUPPORT claim citing a URL whose doc id is in no corpus document
  (its "fetch" finds nothing: unreadable, HTTP 404);
- ``overstated``: a SUPPORT claim rewritten to say more than its abstract
  (:func:`overstate`), citing that abstract;
- ``uncited``: a SUPPORT claim with its marker removed.

Each report then goes through what an import does: :func:`~research.pipeline.audit.parse_report`
reads it, each sentence's citations are resolved to abstracts (an unknown id is unreadable,
worded as the audit stage words a failed fetch), the abstract becomes one evidence item
(the whole abstract, as the oracle verification bench judges it) and
:func:`~research.pipeline.audit.check.check_citation` judges the sentence with the verify
stage's families. :func:`score` counts, per fault, how often the check does not say
``supports`` (caught) and how often it says the exact expected outcome; for correct claims
the false-flag rate (not ``supports``) and the coverage kept (``supports``). Every rate is
over the claims *generated*: a sentence the parser loses counts as neither caught nor kept,
so nothing scores by going missing. A check that abstains on everything catches every
fault, so beside each catch rate stand its margin over the false-flag rate and, for a
wrong citation and an overstatement, the control: how many of the claims whose faithful
sentence (citing its gold abstract) the check confirms it catches once faulted.

Pure (no database); the data stay outside the repository, the generator is seeded.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from research.bench.scifact import SciFactClaim, SciFactDoc
from research.bench.verification import claim_input
from research.pipeline.audit import Citation, ParsedReport, parse_report
from research.pipeline.audit.check import (
    CONTRADICTS,
    INSUFFICIENT,
    OUTCOMES,
    SUPPORTS,
    UNCITED,
    UNVERIFIABLE,
    check_citation,
)
from research.pipeline.language.sentences import split_sentences
from research.pipeline.verify import VerifyConfig

CORRECT = "correct"
WRONG_CITATION = "wrong-citation"
CONTRADICTED = "contradicted"
INVENTED_URL = "invented-url"
OVERSTATED = "overstated"
NO_CITATION = "uncited"
FAULTS = (CORRECT, WRONG_CITATION, CONTRADICTED, INVENTED_URL, OVERSTATED, NO_CITATION)
DEFAULT_SHARES = {fault: (0.5 if fault == CORRECT else 0.1) for fault in FAULTS}

# The outcome a perfect check gives each fault. ``caught`` only asks for "not supports".
EXPECTED = {
    CORRECT: SUPPORTS,
    WRONG_CITATION: INSUFFICIENT,  # an unrelated abstract neither supports nor refutes
    CONTRADICTED: CONTRADICTS,
    INVENTED_URL: UNVERIFIABLE,
    OVERSTATED: INSUFFICIENT,  # the abstract supports less than the sentence says
    NO_CITATION: UNCITED,
}
LOST = "lost"  # the parser did not recover the sentence: no outcome at all
# Faults whose faithful sentence (the claim as the data states it, citing its gold
# abstract) is also checked, as a control: a fault is only *detected* where the check
# confirms the faithful sentence and not the faulty one; elsewhere it merely abstains.
PAIRED = (WRONG_CITATION, OVERSTATED)

URL_PREFIX = "https://corpus.invalid/doc/"
_DOC_URL = re.compile(r"^https://corpus\.invalid/doc/(\d+)$")

# overstate(): a modal hedge (not followed by "not") becomes "will always"; without one, a
# universal quantifier closes the sentence. Four modals: under the word-list rule.
_MODAL = re.compile(r"\b(?:may|might|can|could)\b(?! not\b)")
ALWAYS = "will always"
UNIVERSAL = "in every case"


def overstate(text: str) -> str:
    """``text`` (a claim, its final period removed) said more strongly than its source.

    Deterministic: the first modal hedge (may, might, can, could; lower case, not before
    "not") becomes "will always" ("X may reduce Y" -> "X will always reduce Y"); a claim
    without one gains a universal quantifier at its end ("X reduces Y" -> "X reduces Y
    in every case").
    """
    if _MODAL.search(text):
        return _MODAL.sub(ALWAYS, text, count=1)
    return f"{text} {UNIVERSAL}"


@dataclass(frozen=True)
class PlannedClaim:
    """One sentence of a generated report and what it is known to be."""

    report: int
    fault: str
    claim_id: int  # the source claim (its out-of-fold models are chosen by this id)
    text: str  # the sentence as the report states it, without its marker, ending in "."
    cited: int | None  # the doc id its marker's URL names (None: no marker)
    gold: int  # the claim's gold abstract (SUPPORT, or CONTRADICT for contradicted)

    @property
    def url(self) -> str:
        return "" if self.cited is None else f"{URL_PREFIX}{self.cited}"


@dataclass(frozen=True)
class GeneratedReport:
    index: int
    markdown: str
    claims: tuple[PlannedClaim, ...]


def allocate(total: int, shares: dict[str, float]) -> dict[str, int]:
    """Exact counts per fault for ``total`` claims (largest remainder; ties in FAULTS order)."""
    weight = sum(shares.values())
    if total < 0 or weight <= 0 or any(v < 0 for v in shares.values()):
        raise ValueError("shares must be non-negative and not all zero")
    raw = {f: total * shares.get(f, 0.0) / weight for f in FAULTS}
    counts = {f: int(raw[f]) for f in FAULTS}
    rest = sorted(FAULTS, key=lambda f: (-(raw[f] - counts[f]), FAULTS.index(f)))
    for fault in rest[: total - sum(counts.values())]:
        counts[fault] += 1
    return counts


def _body(text: str) -> str:
    """A claim as one sentence's body: spaces collapsed, its final period removed."""
    return " ".join(text.split()).rstrip(". ")


def _gold(claim: SciFactClaim, label: str, docs: dict[int, SciFactDoc]) -> int | None:
    found = sorted(d for d, lab in claim.doc_labels.items() if lab == label and d in docs)
    return found[0] if found else None


def eligible(claim: SciFactClaim, label: str, docs: dict[int, SciFactDoc]) -> int | None:
    """The claim's gold abstract for ``label`` if the claim can be one report sentence:
    its claim-level label is ``label``, the abstract is in the corpus, and the splitter
    reads it as one sentence (a two-sentence claim would be two claims of a report)."""
    if claim.label != label:
        return None
    body = _body(claim.text)
    if not body or len(split_sentences(body + ".")) != 1:
        return None
    return _gold(claim, label, docs)


def generate(
    claims: Sequence[SciFactClaim],
    docs: dict[int, SciFactDoc],
    *,
    seed: int,
    reports: int,
    per_report: int,
    shares: dict[str, float] | None = None,
) -> list[GeneratedReport]:
    """``reports`` reports of ``per_report`` sentences each, faults in exact proportions.

    Each source claim is used once. Raises ValueError when the claims given are too few.
    """
    rng = random.Random(seed)
    counts = allocate(reports * per_report, shares or DEFAULT_SHARES)
    supported = [
        c for c in sorted(claims, key=lambda c: c.claim_id) if eligible(c, "SUPPORT", docs)
    ]
    refuted = [
        c for c in sorted(claims, key=lambda c: c.claim_id) if eligible(c, "CONTRADICT", docs)
    ]
    rng.shuffle(supported)
    rng.shuffle(refuted)
    need_refuted = counts[CONTRADICTED]
    need_supported = sum(counts.values()) - need_refuted
    if need_supported > len(supported) or need_refuted > len(refuted):
        raise ValueError(
            f"{need_supported} supported and {need_refuted} contradicted claims needed, "
            f"{len(supported)} and {len(refuted)} available: ask for fewer reports or "
            "claims per report, or raise --limit"
        )
    faults = [fault for fault in FAULTS for _ in range(counts[fault])]
    rng.shuffle(faults)
    doc_ids = sorted(docs)
    planned: list[PlannedClaim] = []
    for n, fault in enumerate(faults):
        claim = (refuted if fault == CONTRADICTED else supported).pop()
        label = "CONTRADICT" if fault == CONTRADICTED else "SUPPORT"
        gold = _gold(claim, label, docs)
        assert gold is not None
        body = _body(claim.text)
        cited: int | None = gold
        if fault == WRONG_CITATION:
            cited = _unrelated(rng, doc_ids, claim)
        elif fault == INVENTED_URL:
            cited = _invented(rng, docs)
        elif fault == OVERSTATED:
            body = overstate(body)
        elif fault == NO_CITATION:
            cited = None
        planned.append(
            PlannedClaim(n // per_report, fault, claim.claim_id, body + ".", cited, gold)
        )
    return [
        render(i, planned[i * per_report : (i + 1) * per_report], docs, rng) for i in range(reports)
    ]


def _unrelated(rng: random.Random, doc_ids: list[int], claim: SciFactClaim) -> int:
    known = set(claim.cited_doc_ids) | set(claim.doc_labels)
    while True:
        doc_id = rng.choice(doc_ids)
        if doc_id not in known:
            return doc_id


def _invented(rng: random.Random, docs: dict[int, SciFactDoc]) -> int:
    while True:
        doc_id = rng.randrange(10**7, 10**9)
        if doc_id not in docs:
            return doc_id


def render(
    index: int, claims: Sequence[PlannedClaim], docs: dict[int, SciFactDoc], rng: random.Random
) -> GeneratedReport:
    """The report in open_deep_research's Markdown: a title, a section of paragraphs (two to
    four sentences each), and a ``### Sources`` list numbered in order of first citation."""
    numbers: dict[int, int] = {}
    titles: dict[int, str] = {}
    sentences: list[str] = []
    for claim in claims:
        if claim.cited is None:
            sentences.append(claim.text)
            continue
        number = numbers.setdefault(claim.cited, len(numbers) + 1)
        doc = docs.get(claim.cited) or docs[claim.gold]  # an invented URL keeps a real title
        titles.setdefault(claim.cited, " ".join(doc.title.split()).rstrip(".:") or "Untitled")
        sentences.append(f"{claim.text[:-1]} [{number}].")
    paragraphs: list[str] = []
    while sentences:
        size = rng.randint(2, 4)
        paragraphs.append(" ".join(sentences[:size]))
        sentences = sentences[size:]
    sources = [f"[{n}] {titles[d]}: {URL_PREFIX}{d}" for d, n in numbers.items()]
    markdown = "\n\n".join(
        [
            f"# Report {index + 1}: what the cited studies found",
            "## Findings",
            *paragraphs,
            "### Sources",
            "\n".join(sources),
        ]
    )
    return GeneratedReport(index, markdown + "\n", tuple(claims))


# --- the import: parse, resolve, check ---------------------------------------------------------


@dataclass(frozen=True)
class ClaimResult:
    fault: str
    claim_id: int
    report: int
    text: str  # as generated
    outcome: str  # one of OUTCOMES, or LOST
    recovered: bool  # the parser gave back this sentence with exactly its citation
    parsed_text: str = ""
    parsed_urls: tuple[str, ...] = ()
    reason: str = ""
    confidence: float = 0.0
    control: str = ""  # PAIRED faults: the faithful sentence's outcome on its gold abstract

    def to_json(self) -> dict[str, Any]:
        return {
            "fault": self.fault,
            "claim_id": self.claim_id,
            "report": self.report,
            "text": self.text,
            "outcome": self.outcome,
            "recovered": self.recovered,
            "parsed_text": self.parsed_text,
            "parsed_urls": list(self.parsed_urls),
            "reason": self.reason,
            "confidence": round(self.confidence, 4),
            "control": self.control,
        }


@dataclass
class AuditBench:
    results: list[ClaimResult] = field(default_factory=list)
    seconds: float = 0.0


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def align(report: GeneratedReport, parsed: ParsedReport) -> list[Any]:
    """Per generated sentence, the parsed sentence that states it (in order), or None."""
    found: list[Any] = []
    cursor = 0
    for claim in report.claims:
        match = next(
            (
                i
                for i in range(cursor, len(parsed.sentences))
                if _same(parsed.sentences[i].text, claim.text)
            ),
            None,
        )
        found.append(None if match is None else parsed.sentences[match])
        cursor = cursor if match is None else match + 1
    return found


def doc_id(citation: Citation) -> int | None:
    """The corpus doc id a citation's URL names, or None."""
    match = _DOC_URL.match(citation.url.strip())
    return int(match.group(1)) if match else None


def check_report(
    report: GeneratedReport,
    docs: dict[int, SciFactDoc],
    claims: dict[int, SciFactClaim],
    config: VerifyConfig,
) -> list[ClaimResult]:
    """Import one report as the audit does and judge each of its sentences."""
    parsed = parse_report(report.markdown, filename=f"report-{report.index + 1}.md")
    results: list[ClaimResult] = []
    for planned, sentence in zip(report.claims, align(report, parsed), strict=True):
        control = ""
        if planned.fault in PAIRED:
            faithful = claims[planned.claim_id]
            faithful = replace(faithful, text=_body(faithful.text) + ".")
            gold = [docs[planned.gold].item()]
            control = check_citation(claim_input(faithful), gold, config, cites=1).outcome
        if sentence is None:
            results.append(
                ClaimResult(
                    planned.fault,
                    planned.claim_id,
                    planned.report,
                    planned.text,
                    LOST,
                    False,
                    control=control,
                )
            )
            continue
        urls = tuple(c.url for c in sentence.citations)
        expected = (planned.url,) if planned.url else ()
        recovered = urls == expected and not sentence.unresolved
        items, unreadable = [], []
        for citation in sentence.citations:
            cited = doc_id(citation)
            if cited is not None and cited in docs:
                items.append(docs[cited].item())
            elif citation.url:
                unreadable.append(f"{citation.url} could not be fetched: HTTP 404")
            else:
                unreadable.append(f"reference {citation.label} names no URL, DOI or arXiv id")
        unreadable += [
            f"the marker {m} names no reference of the report" for m in sentence.unresolved
        ]
        source = replace(claims[planned.claim_id], text=sentence.text)
        check = check_citation(
            claim_input(source),
            items,
            config,
            cites=len(sentence.citations) + len(sentence.unresolved),
            unreadable=unreadable,
        )
        results.append(
            ClaimResult(
                planned.fault,
                planned.claim_id,
                planned.report,
                planned.text,
                check.outcome,
                recovered,
                parsed_text=sentence.text,
                parsed_urls=urls,
                reason=check.reason,
                confidence=check.confidence,
                control=control,
            )
        )
    return results


def run_bench(
    reports: Sequence[GeneratedReport],
    docs: dict[int, SciFactDoc],
    claims: Sequence[SciFactClaim],
    config: VerifyConfig,
    progress: Callable[[int, int], None] | None = None,
) -> AuditBench:
    by_id = {c.claim_id: c for c in claims}
    bench = AuditBench()
    started = time.perf_counter()
    for n, report in enumerate(reports):
        bench.results += check_report(report, docs, by_id, config)
        if progress:
            progress(n + 1, len(reports))
    bench.seconds = time.perf_counter() - started
    return bench


# --- scoring ----------------------------------------------------------------------------------


def _rate(part: int, whole: int) -> float | None:
    """``part / whole``, or None over no claims: never a rate of 0 over nothing."""
    return round(part / whole, 4) if whole else None


def _shown(rate: float | None, sign: str = "") -> str:
    return "n/a" if rate is None else f"{rate:{sign}.3f}"


def score(results: Sequence[ClaimResult]) -> dict[str, Any]:
    """Per fault: claims, outcome counts, caught (not ``supports``; a lost sentence is not
    caught) and exact (the :data:`EXPECTED` outcome) with their rates; for correct claims
    the false-flag rate (not ``supports``, lost included), the false-contradiction rate and
    the coverage kept (``supports``); the parse: sentences recovered with their citation.

    ``margin`` (per fault) is the caught rate less the correct claims' false-flag rate: a
    check that flags every sentence catches every fault and keeps no coverage, and its
    margin is 0. A rate over no claims is None (shown "n/a"), never 0: without correct
    claims there is no false-flag rate, coverage or margin. For :data:`PAIRED` faults,
    ``detected`` is how many of the claims whose faithful sentence the check confirms it
    catches (``of``: how many it confirms)."""
    per_fault: dict[str, Any] = {}
    for fault in FAULTS:
        rows = [r for r in results if r.fault == fault]
        outcomes = Counter(r.outcome for r in rows)
        caught = sum(1 for r in rows if r.outcome not in (SUPPORTS, LOST))
        exact = outcomes[EXPECTED[fault]]
        entry: dict[str, Any] = {
            "claims": len(rows),
            "outcomes": {o: outcomes[o] for o in (*OUTCOMES, LOST)},
            "expected": EXPECTED[fault],
            "exact": exact,
            "exact_rate": _rate(exact, len(rows)),
        }
        if fault == CORRECT:
            entry["false_flag_rate"] = _rate(len(rows) - outcomes[SUPPORTS], len(rows))
            entry["false_contradiction_rate"] = _rate(outcomes[CONTRADICTS], len(rows))
            entry["coverage_kept"] = _rate(outcomes[SUPPORTS], len(rows))
        else:
            entry["caught"] = caught
            entry["caught_rate"] = _rate(caught, len(rows))
        if fault in PAIRED:
            confirmed = [r for r in rows if r.control == SUPPORTS]
            entry["detected"] = sum(1 for r in confirmed if r.outcome not in (SUPPORTS, LOST))
            entry["of"] = len(confirmed)
        per_fault[fault] = entry
    correct = per_fault[CORRECT]
    for fault in FAULTS[1:]:
        flagged, caught_rate = correct["false_flag_rate"], per_fault[fault]["caught_rate"]
        margin = None if flagged is None or caught_rate is None else caught_rate - flagged
        per_fault[fault]["margin"] = None if margin is None else round(margin, 4)
    faulty = [r for r in results if r.fault != CORRECT]
    caught_all = sum(1 for r in faulty if r.outcome not in (SUPPORTS, LOST))
    recovered = sum(1 for r in results if r.recovered)
    return {
        "faults": per_fault,
        "claims": len(results),
        "caught_rate_all_faults": _rate(caught_all, len(faulty)),
        "false_flag_rate": correct["false_flag_rate"],
        "coverage_kept": correct["coverage_kept"],
        "parse": {
            "sentences": len(results),
            "recovered": recovered,
            "lost": sum(1 for r in results if r.outcome == LOST),
            "citation_mismatch": sum(1 for r in results if r.outcome != LOST and not r.recovered),
        },
    }


def table(figures: dict[str, Any]) -> list[str]:
    """The per-fault table in Markdown, false-flag rate and coverage beside the catch rates."""
    head = ["fault", "claims", *OUTCOMES, LOST, "caught", "margin", "expected", "exact"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for fault, entry in figures["faults"].items():
        counts = [str(entry["outcomes"][o]) for o in (*OUTCOMES, LOST)]
        if fault == CORRECT:
            caught = (
                f"false flag {_shown(entry['false_flag_rate'])}; "
                f"kept {_shown(entry['coverage_kept'])}"
            )
            margin = "-"
        else:
            caught = f"{entry['caught']} ({_shown(entry['caught_rate'])})"
            if fault in PAIRED:
                caught += f"; {entry['detected']} of {entry['of']} confirmed when faithful"
            margin = _shown(entry["margin"], "+")
        exact = f"{entry['exact']} ({_shown(entry['exact_rate'])})"
        lines.append(
            "| "
            + " | ".join(
                [fault, str(entry["claims"]), *counts, caught, margin, entry["expected"], exact]
            )
            + " |"
        )
    return lines
