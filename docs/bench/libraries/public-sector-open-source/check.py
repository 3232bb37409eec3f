"""Check the public-sector open-source policy library against its manifest and gold set.

    python3 docs/bench/libraries/public-sector-open-source/check.py [DOCS_DIR]

The documents themselves are externally authored data, so they live outside the repository
in ``../shared/data/public-sector-open-source/docs/`` (see SOURCES.md). A folder named by the
DOCS_DIR argument or ``$PSO_DOCS`` is used as given; otherwise the first of ``docs/`` next
to this file and the shared folder that exists.

It checks that:

1. every row of SOURCES.md names a file in the docs folder whose size and sha256 match,
   and the folder holds no file the table leaves out;
2. questions.json has five questions, each with a question, a scope and 4 to 8 gold
   claims, and every claim has a kind of finding, limitation or counter;
3. every gold quote is a verbatim substring of its file (``quote in text``), and that file
   is in SOURCES.md.

Exit status: 0 when everything passes, 1 on any failure, 2 when no docs folder is found.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
SHARED_DOCS = REPO.parent / "shared" / "data" / "public-sector-open-source" / "docs"
KINDS = {"finding", "limitation", "counter"}

# A manifest row: | n | `file` | title | publisher | origin | licence | bytes | `sha256` |
ROW = re.compile(r"^\|\s*\d+\s*\|\s*`([^`]+)`\s*\|.*\|\s*([\d,]+)\s*\|\s*`([0-9a-f]{64})`\s*\|\s*$")


def find_docs(argv: list[str]) -> Path | None:
    named = argv[1] if len(argv) > 1 else os.environ.get("PSO_DOCS", "")
    if named:
        return Path(named) if Path(named).is_dir() else None
    return next((p for p in (HERE / "docs", SHARED_DOCS) if p.is_dir()), None)


def read_manifest() -> dict[str, tuple[int, str]]:
    rows = {}
    for line in (HERE / "SOURCES.md").read_text(encoding="utf-8").splitlines():
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


def check_questions(docs: Path, manifest: dict[str, tuple[int, str]]) -> tuple[list[str], int]:
    questions = json.loads((HERE / "questions.json").read_text(encoding="utf-8"))
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
    docs = find_docs(argv)
    if docs is None:
        print(
            "No docs folder found (the one named, or else"
            f" {HERE / 'docs'} and {SHARED_DOCS}); fetch the documents as SOURCES.md"
            " describes, or pass the folder."
        )
        return 2
    manifest = read_manifest()
    if not manifest:
        print("SOURCES.md has no document rows")
        return 1
    errors = check_sources(docs, manifest)
    question_errors, quotes = check_questions(docs, manifest)
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
