"""Numbered citations: the bibliography entries, BibTeX and CSL-JSON of cited sources."""

from __future__ import annotations

import json
from typing import Any

from ledger.models import Snapshot, Source
from review.exports.records import BibEntry, SnapshotRef

BIBTEX_TYPES = {"paper": "article", "preprint": "misc", "dataset": "misc"}
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


def bibliography_entry(number: int, source: Source, snapshots: list[Snapshot]) -> BibEntry:
    """One reference, with the snapshots a report's quotes came from."""
    fields: dict[str, Any] = {
        "number": number,
        "key": f"src{number}",
        "canonical_id": source.canonical_id,
        "title": source.title or source.canonical_id,
        "authors": [author_name(a) for a in source.authors or []],
        "publisher": source.publisher,
        "url": source.url,
        "doi": source.doi,
        "arxiv_id": source.arxiv_id,
        "source_type": source.source_type,
        "published_date": source.published_date.isoformat() if source.published_date else "",
        "snapshots": [
            SnapshotRef(sha256=s.text_sha256, fetched_at=s.fetched_at.isoformat())
            for s in snapshots
        ],
    }
    return BibEntry(**fields, reference=reference_text(**fields))


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
    publisher: str,
    published_date: str,
    doi: str,
    url: str,
    canonical_id: str,
    **_: Any,
) -> str:
    """A plain one-line reference: authors. title. publisher, date. identifier."""
    parts = []
    if authors:
        parts.append(", ".join(authors))
    parts.append(title)
    venue = ", ".join(p for p in (publisher, published_date) if p)
    if venue:
        parts.append(venue)
    parts.append(doi and f"doi:{doi}" or url or canonical_id)
    return ". ".join(p.rstrip(".") for p in parts) + "."


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
    if entry.published_date:
        fields.append(("year", entry.published_date[:4]))
    if entry.publisher:
        fields.append(("journal" if kind == "article" else "publisher", entry.publisher))
    for name in ("doi", "url"):
        if getattr(entry, name):
            fields.append((name, getattr(entry, name)))
    if entry.arxiv_id:
        fields += [("eprint", entry.arxiv_id), ("archiveprefix", "arXiv")]
    hashes = ", ".join(s.sha256 for s in entry.snapshots)
    fields.append(("note", f"{entry.canonical_id}; snapshot sha256 {hashes}"))
    body = ",\n".join(
        f"  {name} = {{{bibtex_escape(value, verbatim=name in _VERBATIM_FIELDS)}}}"
        for name, value in fields
    )
    return f"@{kind}{{{entry.key},\n{body}\n}}\n"


# --- CSL-JSON -------------------------------------------------------------------------


def csl_json(entries: list[BibEntry]) -> str:
    return json.dumps([_csl_item(e) for e in entries], indent=2, ensure_ascii=False) + "\n"


def _csl_item(entry: BibEntry) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": entry.key,
        "type": CSL_TYPES.get(entry.source_type, "document"),
        "title": entry.title,
        "citation-number": entry.number,
        "note": entry.canonical_id,
    }
    if entry.authors:
        item["author"] = [{"literal": name} for name in entry.authors]
    if entry.published_date:
        item["issued"] = {"date-parts": [_date_parts(entry.published_date)]}
    if entry.snapshots:
        item["accessed"] = {"date-parts": [_date_parts(entry.snapshots[0].fetched_at)]}
    if entry.publisher:
        item["publisher"] = entry.publisher
    if entry.url:
        item["URL"] = entry.url
    if entry.doi:
        item["DOI"] = entry.doi
    return item


def _date_parts(iso: str) -> list[int]:
    return [int(part) for part in iso[:10].split("-")]
