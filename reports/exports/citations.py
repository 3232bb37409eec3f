"""Numbered citations: the bibliography entries, BibTeX and CSL-JSON of cited sources."""

from __future__ import annotations

import json
from typing import Any

from reports.exports.facts import SnapshotFacts, SourceFacts
from reports.exports.records import BibEntry, SnapshotRef

BIBTEX_TYPES = {"paper": "article", "preprint": "misc", "dataset": "misc"}
# CSL types whose venue is the journal or site they appeared in (container-title).
_CONTAINED = frozenset({"article-journal", "article", "article-newspaper", "webpage"})
CSL_TYPES = {
    "paper": "article-journal",
    "preprint": "article",
    "encyclopedia": "entry-encyclopedia",
    "news": "article-newspaper",
    "web": "webpage",
    "documentation": "webpage",
    "dataset": "dataset",
    "file": "document",
}


# A reference lists this many authors, then "et al." (BibTeX and CSL-JSON keep them all).
MAX_AUTHORS_SHOWN = 6
UNKNOWN_AUTHORS = "Authors unknown"
UNKNOWN_YEAR = "year unknown"
UNKNOWN_VENUE = "Venue unknown"


def bibliography_entry(
    number: int,
    source: SourceFacts,
    snapshots: list[SnapshotFacts],
    *,
    year: int | None = None,
    library: str = "",
) -> BibEntry:
    """One reference, with the snapshots a report's quotes came from.

    Authors, year and venue come from the source's metadata only (``year`` may supply
    a year the source profile recorded); what the metadata lacks stays empty and the
    printed reference says "unknown" — nothing is guessed. ``library`` is the name of the
    library the source was found in: an uploaded document is found there, by that name.
    """
    published = source.published_date.isoformat() if source.published_date else ""
    fields: dict[str, Any] = {
        "number": number,
        "key": f"src{number}",
        "canonical_id": source.canonical_id,
        "title": source_title(source),
        "authors": [name for name in (author_name(a) for a in source.authors or []) if name],
        "publisher": source.publisher,
        "url": source.url,
        "doi": source.doi,
        "arxiv_id": source.arxiv_id,
        "source_type": source.source_type,
        "published_date": published,
        "year": published[:4] or (str(year) if year else ""),
        "venue": source.publisher,
        "identifier": identifier(source, library),
        "snapshots": [
            SnapshotRef(sha256=s.text_sha256, fetched_at=s.fetched_at.isoformat())
            for s in snapshots
        ],
    }
    return BibEntry(**fields, reference=reference_text(**fields))


# The corpus name of a JSONL file uploaded into a library (ledger.services.uploads):
# "upload-<library code>", an identity, not a name a reader knows the library by.
UPLOADED_CORPUS = "upload-"


def source_title(source: SourceFacts) -> str:
    """A source's name: its title (the extracted one, for an upload), else the uploaded
    file's name, else its corpus document id, else its canonical id."""
    meta = source.metadata or {}
    return source.title or _file(meta) or str(meta.get("doc_id") or "") or source.canonical_id


def identifier(source: SourceFacts, library: str = "") -> str:
    """How a reader finds the source: DOI, arXiv id, URL, else the corpus document, else
    the library that holds it (an uploaded file, named by its library's name)."""
    if source.doi:
        return f"doi:{source.doi.removeprefix('https://doi.org/')}"
    if source.arxiv_id:
        return f"arXiv:{source.arxiv_id}"
    if source.url:
        return source.url
    meta = source.metadata or {}
    corpus, doc_id = str(meta.get("corpus") or ""), meta.get("doc_id")
    held = f"{library} library" if library else "uploaded"
    if corpus and doc_id and not corpus.startswith(UPLOADED_CORPUS):
        return f"{corpus} corpus, document {doc_id}"
    if doc_id:
        return f"{held}, document {doc_id}"
    if _file(meta):
        return f"{held}, file {_file(meta)}"
    return f"{library} library" if library else source.canonical_id


def _file(meta: dict[str, Any]) -> str:
    """An uploaded file's name without the folders a browser may send with it."""
    return str(meta.get("filename") or "").replace("\\", "/").rsplit("/", 1)[-1]


def author_name(author: Any) -> str:
    if isinstance(author, dict):
        if author.get("name"):
            return str(author["name"])
        return " ".join(str(author.get(k, "")) for k in ("given", "family")).strip()
    return str(author)


def reference_text(
    *,
    authors: list[str],
    title: str,
    year: str,
    venue: str,
    identifier: str,
    **_: Any,
) -> str:
    """One printed reference: authors (year). Title. Venue. Identifier.

    Unknown authors, year or venue are said to be unknown, never left out silently.
    """
    names = authors[:MAX_AUTHORS_SHOWN]
    who = ", ".join(names) + (", et al" if len(authors) > MAX_AUTHORS_SHOWN else "")
    parts = [
        f"{who or UNKNOWN_AUTHORS} ({year or UNKNOWN_YEAR})",
        title,
        venue or UNKNOWN_VENUE,
        identifier,
    ]
    return ". ".join(p.strip().rstrip(".") for p in parts if p.strip()) + "."


# --- BibTeX ---------------------------------------------------------------------------

_BIBTEX_ESCAPES = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        # BibTeX counts braces without regard to backslashes: keep every field balanced.
        "{": r"\textbraceleft{}",
        "}": r"\textbraceright{}",
        "%": r"\%",
        "&": r"\&",
        "#": r"\#",
        "_": r"\_",
        "$": r"\$",
        "^": r"\^{}",
        "~": r"\~{}",
    }
)


_VERBATIM_FIELDS = frozenset({"url", "doi", "eprint"})


def bibtex_escape(value: str, *, verbatim: bool = False) -> str:
    """Escape TeX specials so hostile titles cannot break out of a field.

    URL-like fields are typeset verbatim by biblatex/url.sty: there only braces and
    backslashes (which could close the field) are removed.
    """
    value = " ".join(value.split())
    if verbatim:
        return value.translate(str.maketrans("", "", "{}\\"))
    return value.translate(_BIBTEX_ESCAPES)


def bibtex(entries: list[BibEntry]) -> str:
    return "\n".join(_bibtex_entry(e) for e in entries)


def _bibtex_entry(entry: BibEntry) -> str:
    kind = BIBTEX_TYPES.get(entry.source_type, "misc")
    fields: list[tuple[str, str]] = [("title", entry.title)]
    if entry.authors:
        fields.append(("author", " and ".join(entry.authors)))
    if year := _year(entry):
        fields.append(("year", year))
    if venue := entry.venue or entry.publisher:
        fields.append(("journal" if kind == "article" else "publisher", venue))
    for name in ("doi", "url"):
        if getattr(entry, name):
            fields.append((name, getattr(entry, name)))
    if entry.arxiv_id:
        fields += [("eprint", entry.arxiv_id), ("archiveprefix", "arXiv")]
    fields.append(("note", _note(entry)))
    body = ",\n".join(
        f"  {name} = {{{bibtex_escape(value, verbatim=name in _VERBATIM_FIELDS)}}}"
        for name, value in fields
    )
    return f"@{kind}{{{entry.key},\n{body}\n}}\n"


def _year(entry: BibEntry) -> str:
    return entry.year or entry.published_date[:4]


def missing_metadata(entry: BibEntry) -> list[str]:
    """What the source metadata lacks, in words ("authors", "year", "venue")."""
    missing = [] if entry.authors else ["authors"]
    missing += [] if _year(entry) else ["year"]
    return missing + ([] if entry.venue or entry.publisher else ["venue"])


def _note(entry: BibEntry) -> str:
    parts = [entry.identifier or entry.canonical_id]
    if missing := missing_metadata(entry):
        parts.append(f"{_and(missing)} not in the source metadata")
    parts.append("snapshot sha256 " + ", ".join(s.sha256 for s in entry.snapshots))
    return "; ".join(parts)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# --- CSL-JSON -------------------------------------------------------------------------


def csl_json(entries: list[BibEntry]) -> str:
    return json.dumps([_csl_item(e) for e in entries], indent=2, ensure_ascii=False) + "\n"


def _csl_item(entry: BibEntry) -> dict[str, Any]:
    kind = CSL_TYPES.get(entry.source_type, "document")
    item: dict[str, Any] = {
        "id": entry.key,
        "type": kind,
        "title": entry.title,
        "citation-number": entry.number,
        "note": _note(entry),
    }
    if entry.authors:
        item["author"] = [{"literal": name} for name in entry.authors]
    if entry.published_date:
        item["issued"] = {"date-parts": [_date_parts(entry.published_date)]}
    elif year := _year(entry):
        item["issued"] = {"date-parts": [[int(year)]]}
    if entry.snapshots:
        item["accessed"] = {"date-parts": [_date_parts(entry.snapshots[0].fetched_at)]}
    if venue := entry.venue or entry.publisher:
        item["container-title" if kind in _CONTAINED else "publisher"] = venue
    if entry.url:
        item["URL"] = entry.url
    if entry.doi:
        item["DOI"] = entry.doi
    return item


def _date_parts(iso: str) -> list[int]:
    return [int(part) for part in iso[:10].split("-")]
