"""A benchmark document library: its manifest, its gold questions, and the checks of both.

A library is a folder under ``docs/bench/libraries/`` holding ``SOURCES.md`` (one table
row per document: file, size in bytes, sha256) and ``questions.json`` (five questions,
each with a scope and 4 to 8 gold claims: claim, file, verbatim quote, kind). The
documents themselves are externally authored data and live outside the repository; see
:func:`find_docs` for where they are looked for.

Standard library only: ``docs/bench/libraries/check.py`` imports this module without
Django, and ``bench_runs --library-bench`` imports it inside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
WORK_LIBRARIES = Path("/work/libraries")
KINDS = frozenset({"finding", "limitation", "counter"})
QUESTIONS = 5
GOLD_PER_QUESTION = (4, 8)

# A manifest row: | n | `file` | title | publisher | origin | licence | bytes | `sha256` |
ROW = re.compile(r"^\|\s*\d+\s*\|\s*`([^`]+)`\s*\|.*\|\s*([\d,]+)\s*\|\s*`([0-9a-f]{64})`\s*\|\s*$")


class Listed(NamedTuple):
    """What SOURCES.md says of one file."""

    size: int
    sha256: str


@dataclass(frozen=True)
class GoldClaim:
    claim: str  # what a careful reader would extract
    file: str  # the document it comes from (a SOURCES.md file name)
    quote: str  # verbatim in that file
    kind: str  # finding, limitation or counter


@dataclass(frozen=True)
class LibraryQuestion:
    question: str
    scope: str
    gold: tuple[GoldClaim, ...]


def candidate_docs(library: Path) -> list[Path]:
    """The folders looked at, in order, when no docs folder is named."""
    name = library.resolve().name
    return [
        library / "docs",
        REPO.parent / "shared" / "data" / name / "docs",
        WORK_LIBRARIES / name / "docs",
    ]


def find_docs(library: Path, named: str = "") -> Path | None:
    """The documents folder: ``named`` (else ``$LIBRARY_DOCS``) used as given, or the first
    of :func:`candidate_docs` that exists; None when there is none."""
    named = named or os.environ.get("LIBRARY_DOCS", "")
    if named:
        return Path(named) if Path(named).is_dir() else None
    return next((p for p in candidate_docs(library) if p.is_dir()), None)


def read_manifest(library: Path) -> dict[str, Listed]:
    rows = {}
    for line in (library / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            name, size, digest = match.groups()
            rows[name] = Listed(int(size.replace(",", "")), digest)
    return rows


def check_sources(docs: Path, manifest: dict[str, Listed]) -> list[str]:
    """Every listed file is there with its size and sha256, and nothing else is."""
    errors = []
    for name, (size, digest) in manifest.items():
        path = docs / name
        if not path.is_file():
            errors.append(f"{name}: listed in SOURCES.md but missing from {docs}")
            continue
        data = path.read_bytes()
        if len(data) != size:
            errors.append(f"{name}: {len(data)} bytes, SOURCES.md says {size}")
        if hashlib.sha256(data).hexdigest() != digest:
            errors.append(f"{name}: sha256 differs from SOURCES.md")
    for path in sorted(docs.iterdir()):
        if path.name not in manifest:
            errors.append(f"{path.name}: in {docs} but not in SOURCES.md")
    return errors


def check_questions(
    library: Path, docs: Path, manifest: dict[str, Listed]
) -> tuple[list[str], int]:
    """Problems of questions.json, and how many gold quotes were checked."""
    questions = json.loads((library / "questions.json").read_text(encoding="utf-8"))
    errors = []
    if len(questions) != QUESTIONS:
        errors.append(f"questions.json has {len(questions)} questions, expected {QUESTIONS}")
    quotes = 0
    for number, question in enumerate(questions, 1):
        for key in ("question", "scope"):
            if not str(question.get(key, "")).strip():
                errors.append(f"question {number}: no {key}")
        gold = question.get("gold", [])
        low, high = GOLD_PER_QUESTION
        if not low <= len(gold) <= high:
            errors.append(f"question {number}: {len(gold)} gold claims, expected {low} to {high}")
        for item in gold:
            where = f"question {number}, {item.get('file', '')}"
            problems, checked = _gold_problems(item, docs, manifest)
            errors += [f"{where}: {problem}" for problem in problems]
            quotes += checked
    return errors, quotes


def _gold_problems(
    item: dict[str, str], docs: Path, manifest: dict[str, Listed]
) -> tuple[list[str], bool]:
    """One gold claim's problems, and whether its quote was looked for in its file."""
    name, quote = item.get("file", ""), item.get("quote", "")
    problems = []
    if item.get("kind") not in KINDS:
        problems.append(f"kind {item.get('kind')!r} is not one of {sorted(KINDS)}")
    if not item.get("claim", "").strip() or not quote.strip():
        return [*problems, "empty claim or quote"], False
    if name not in manifest:
        return [*problems, "file not in SOURCES.md"], False
    if not (docs / name).is_file():
        return [*problems, f"quote not checked: the file is missing from {docs}"], False
    if quote not in (docs / name).read_text(encoding="utf-8"):
        problems.append(f"quote not found: {quote[:70]!r}")
    return problems, True


def check_library(library: Path, docs: Path) -> tuple[dict[str, Listed], list[str], int]:
    """The manifest, every problem found (documents, then questions), and the quotes checked."""
    manifest = read_manifest(library)
    if not manifest:
        return manifest, ["SOURCES.md has no document rows"], 0
    errors = check_sources(docs, manifest)
    question_errors, quotes = check_questions(library, docs, manifest)
    return manifest, errors + question_errors, quotes


def load_questions(library: Path) -> list[LibraryQuestion]:
    """questions.json as records (run :func:`check_library` first for its problems)."""
    rows = json.loads((library / "questions.json").read_text(encoding="utf-8"))
    return [
        LibraryQuestion(
            question=row["question"],
            scope=row.get("scope", ""),
            gold=tuple(
                GoldClaim(g["claim"], g["file"], g["quote"], g["kind"]) for g in row["gold"]
            ),
        )
        for row in rows
    ]
