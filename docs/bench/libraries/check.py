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

The checks themselves are ``research/bench/library_manifest.py`` (``bench_runs
--library-bench`` runs the same ones before it ingests a library). It checks that:

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

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))  # the checks live in the project; this script needs no Django

from research.bench.library_manifest import candidate_docs, check_library, find_docs  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not (Path(argv[1]) / "SOURCES.md").is_file():
        print("usage: python3 docs/bench/libraries/check.py LIBRARY_DIR [DOCS_DIR]")
        if len(argv) >= 2:
            print(f"{argv[1]}: no SOURCES.md there")
        return 2
    library = Path(argv[1])
    docs = find_docs(library, argv[2] if len(argv) > 2 else "")
    if docs is None:
        looked = ", ".join(str(p) for p in candidate_docs(library))
        print(
            f"No docs folder found (the one named, or else {looked});"
            " fetch the documents as SOURCES.md describes, or pass the folder."
        )
        return 2
    manifest, errors, quotes = check_library(library, docs)
    for error in errors:
        print("FAIL", error)
    total = sum(listed.size for listed in manifest.values())
    print(
        f"{docs}: {len(manifest)} documents, {total:,} bytes; {quotes} gold quotes checked;"
        f" {'FAILED' if errors else 'all pass'}"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
