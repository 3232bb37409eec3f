"""Check a benchmark document library against its manifest and gold set.

    python3 docs/bench/libraries/check.py LIBRARY_DIR [DOCS_DIR]

LIBRARY_DIR is a folder under ``docs/bench/libraries/`` holding ``SOURCES.md`` and
``questions.json``, for example ``docs/bench/libraries/public-sector-open-source``. Its last
path component is the library's name.

The documents themselves are externally authored data, so they live outside the repository
(see each library's SOURCES.md). The docs folder is the first of these that applies:

1. the DOCS_DIR argument, used as given;
2. ``$LIBRARY_DOCS``, used as given;
3. ``LIBRARY_DIR/docs``, if it exists;
4. ``../shared/data/<library name>/docs`` beside the repository checkout, if it exists;
5. ``/work/libraries/<library name>/docs``, if it exists.

It checks that:

1. every row of SOURCES.md names a file in the docs folder whose size and sha256 match,
   and the folder holds no file the table leaves out;
2. questions.json has five questions, each with a question, a scope and 4 to 8 gold
   claims, and every claim has a kind of finding, limitation or counter;
3. every gold quote is a verbatim substring of its file (``quote in text``), and that file
   is in SOURCES.md.

Exit status: 0 when everything passes, 1 on any failure, 2 when no docs folder is found
(or LIBRARY_DIR is missing or has no SOURCES.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
WORK_LIBRARIES = Path("/work/libraries")
KINDS = {"finding", "limitation", "counter"}

# A manifest row: | n | `file` | title | publisher | origin | licence | bytes | `sha256` |
ROW = re.compile(r"^\|\s*\d+\s*\|\s*`([^`]+)`\s*\|.*\|\s*([\d,]+)\s*\|\s*`([0-9a-f]{64})`\s*\|\s*$")


def candidate_docs(library: Path) -> list[Path]:
    """The folders looked at, in order, when no docs folder is named."""
    name = library.resolve().name
    return [
        library / "docs",
        REPO.parent / "shared" / "data" / name / "docs",
        WORK_LIBRARIES / name / "docs",
    ]


def find_docs(library: Path, argv: list[str]) -> Path | None:
    named = argv[2] if len(argv) > 2 else os.environ.get("LIBRARY_DOCS", "")
    if named:
        return Path(named) if Path(named).is_dir() else None
    return next((p for p in candidate_docs(library) if p.is_dir()), None)


def read_manifest(library: Path) -> dict[str, tuple[int, str]]:
    rows = {}
    for line in (library / "SOURCES.md").read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            name, size, digest = match.groups()
            rows[name] = (int(size.replace(",", "")), digest)
    return rows


def check_sources(docs: Path, manifest: dict[str, tuple[int, str]]) -> list[str]:
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
    library: Path, docs: Path, manifest: dict[str, tuple[int, str]]
) -> tuple[list[str], int]:
    questions = json.loads((library / "questions.json").read_text(encoding="utf-8"))
    errors = []
    if len(questions) != 5:
        errors.append(f"questions.json has {len(questions)} questions, expected 5")
    quotes = 0
    for number, question in enumerate(questions, 1):
        for key in ("question", "scope"):
            if not str(question.get(key, "")).strip():
                errors.append(f"question {number}: no {key}")
        gold = question.get("gold", [])
        if not 4 <= len(gold) <= 8:
            errors.append(f"question {number}: {len(gold)} gold claims, expected 4 to 8")
        for item in gold:
            name, quote = item.get("file", ""), item.get("quote", "")
            where = f"question {number}, {name}"
            if item.get("kind") not in KINDS:
                errors.append(f"{where}: kind {item.get('kind')!r} is not one of {sorted(KINDS)}")
            if not item.get("claim", "").strip() or not quote.strip():
                errors.append(f"{where}: empty claim or quote")
                continue
            if name not in manifest:
                errors.append(f"{where}: file not in SOURCES.md")
                continue
            text = (docs / name).read_text(encoding="utf-8")
            if quote not in text:
                errors.append(f"{where}: quote not found: {quote[:70]!r}")
            quotes += 1
    return errors, quotes


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not (Path(argv[1]) / "SOURCES.md").is_file():
        print("usage: python3 docs/bench/libraries/check.py LIBRARY_DIR [DOCS_DIR]")
        if len(argv) >= 2:
            print(f"{argv[1]}: no SOURCES.md there")
        return 2
    library = Path(argv[1])
    docs = find_docs(library, argv)
    if docs is None:
        looked = ", ".join(str(p) for p in candidate_docs(library))
        print(
            f"No docs folder found (the one named, or else {looked});"
            " fetch the documents as SOURCES.md describes, or pass the folder."
        )
        return 2
    manifest = read_manifest(library)
    if not manifest:
        print("SOURCES.md has no document rows")
        return 1
    errors = check_sources(docs, manifest)
    question_errors, quotes = check_questions(library, docs, manifest)
    errors += question_errors
    for error in errors:
        print("FAIL", error)
    total = sum(size for size, _ in manifest.values())
    print(
        f"{docs}: {len(manifest)} documents, {total:,} bytes; {quotes} gold quotes checked;"
        f" {'FAILED' if errors else 'all pass'}"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
