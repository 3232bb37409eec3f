"""The checks a report version passes before any export.

- ``quote_problems(claim, quotes)``: at build time, every cited quote at its offsets in
  its snapshot, every snapshot's and passage's hash.
- ``integrity_problems(report)``: re-checks, from the database, every quote at its
  offsets, every snapshot and passage hash, every evidence link (by its own id), every
  claim's text and fingerprint, and that every reported claim is still approved. Each
  problem names the claim.
- ``searchable(document, fmt, data)``: the text an export shows, for the withheld-text
  scan (``reports.export.render_checked`` refuses an export in which any variant of a
  withheld text would appear).
"""

from __future__ import annotations

import html as htmllib
import io
import json
import re
import zipfile
from typing import Any

from ledger.models import Claim, EvidenceLink, Snapshot
from reports.exports.document import CitedQuote, sha256_text
from reports.exports.facts import ClaimFacts, LinkFacts, SnapshotFacts
from reports.exports.html import render_html
from reports.exports.records import (
    ClaimRow,
    EvidenceRow,
    ReportDocument,
    UnsupportedDocument,
)
from reports.models import Report
from review.services.capsules import approved_capsules


def _name(label: str, code: Any, text: str) -> str:
    return f"claim {label + ' ' if label else ''}({code}) “{text[:80]}”"


def quote_problems(claim: ClaimFacts, quotes: list[CitedQuote], label: str = "") -> list[str]:
    name = _name(label, claim.code, claim.text)
    problems = []
    for quote in quotes:
        snapshot = quote.snapshot
        problems += _snapshot_problems(
            name, snapshot, quote.quote, quote.quote_start, quote.quote_end
        )
        for link in quote.links:
            problems += _passage_problems(name, link)
    return problems


def _snapshot_problems(
    name: str, snapshot: Snapshot | SnapshotFacts, quote: str, start: int, end: int
) -> list[str]:
    problems = []
    if sha256_text(snapshot.text) != snapshot.text_sha256:
        problems.append(f"{name}: snapshot {snapshot.text_sha256[:12]} text was altered")
    if snapshot.text[start:end] != quote:
        problems.append(
            f"{name}: quote no longer matches snapshot {snapshot.text_sha256[:12]} "
            f"at [{start}:{end}]"
        )
    return problems


def _passage_problems(name: str, link: EvidenceLink | LinkFacts) -> list[str]:
    passage = link.passage
    text = link.snapshot.text
    if (
        text[passage.start : passage.end] != passage.text
        or link.passage_fingerprint != passage.fingerprint
    ):
        span = f"{passage.kind} [{passage.start}:{passage.end}]"
        return [f"{name}: passage fingerprint changed ({span})"]
    return []


def report_document(report: Report) -> ReportDocument:
    """The frozen document of a report version (parsed at the JSON boundary)."""
    return ReportDocument.from_json(report.outline)


def integrity_problems(report: Report) -> list[str]:
    """Re-check the frozen report against the ledger as it is now."""
    try:
        document = report_document(report)
    except UnsupportedDocument as exc:
        return [str(exc)]
    problems = []
    if sha256_text(report.markdown) != report.content_hash:
        problems.append("the report text no longer matches its content hash")
    approved = {str(c.code) for c in approved_capsules(report.run)}
    rows = Claim.objects.filter(code__in=[c.code for c in document.claims])
    current = {
        str(c.code): c for c in rows.prefetch_related("evidence__passage", "evidence__snapshot")
    }
    for frozen in document.claims:
        evidence = [row for row in document.appendix_b if row.claim_code == frozen.code]
        problems += _frozen_claim_problems(frozen, current.get(frozen.code), approved, evidence)
    return problems


def _frozen_claim_problems(
    frozen: ClaimRow, claim: Claim | None, approved: set[str], evidence: list[EvidenceRow]
) -> list[str]:
    name = _name(frozen.label, frozen.code, frozen.text)
    if claim is None:
        return [f"{name}: no longer in the ledger"]
    problems = []
    if claim.text != frozen.text or claim.fingerprint != frozen.fingerprint:
        problems.append(f"{name}: text or fingerprint changed since the report was built")
    if frozen.code not in approved:
        problems.append(f"{name}: no longer approved")
    links = {link.pk: link for link in claim.evidence.all()}
    for row in evidence:
        found = [links.get(p.link_id) for p in row.passages]
        moved = [
            p.link_id
            for p, link in zip(row.passages, found, strict=True)
            if link is None or _link_moved(link, row, p.passage_fingerprint)
        ]
        if moved:
            problems.append(
                f"{name}: evidence {row.label} changed in the ledger (link "
                + ", ".join(str(pk) for pk in moved)
                + ")"
            )
            continue
        link = found[0]
        assert link is not None
        problems += _snapshot_problems(
            name, link.snapshot, row.quote, row.quote_start, row.quote_end
        )
        for current in found:
            assert current is not None
            problems += _passage_problems(name, current)
    return problems


def _link_moved(link: EvidenceLink, row: EvidenceRow, passage_fingerprint: str) -> bool:
    return bool(
        link.quote != row.quote
        or link.quote_start != row.quote_start
        or link.quote_end != row.quote_end
        or link.snapshot.text_sha256 != row.snapshot_sha256
        or link.passage_fingerprint != passage_fingerprint
    )


# --- the withheld-text scan -------------------------------------------------------------

_TAG = re.compile(r"<[^>]*>")


def visible_html(markup: str) -> str:
    """The words an HTML page shows: tags dropped, entities decoded (``&#x27;`` → ``'``)."""
    return htmllib.unescape(_TAG.sub(" ", markup))


def json_strings(data: Any) -> list[str]:
    """Every string (keys included) of a JSON value, unescaped."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in (k, *json_strings(v))]
    if isinstance(data, list):
        return [s for item in data for s in json_strings(item)]
    return []


def searchable(document: ReportDocument, fmt: str, data: bytes) -> list[tuple[str, str]]:
    """(where, text) pairs an export shows, for the withheld-text scan.

    A PDF is Chromium's print of the HTML export, so its HTML is scanned (the same words,
    without a PDF text extraction); HTML is scanned as its visible text, JSON as its
    unescaped strings; a bundle member by member, except the snapshot texts (what the
    sources say, needed to re-check quotes offline) and an audit's audited report (what the
    audited engine wrote, kept whole on purpose: every sentence is shown with its mark,
    a rejected one marked dropped; the report itself is scanned like any other).
    """
    if fmt == "pdf":
        return [("pdf", visible_html(render_html(document)))]
    if fmt == "zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return [
                (name, _member_text(name, archive.read(name)))
                for name in archive.namelist()
                if not name.startswith(("snapshots/", "audited/"))
            ]
    text = data.decode("utf-8", "replace")
    if fmt == "html":
        return [("html", visible_html(text))]
    if fmt == "csl":
        return [("csl", "\n".join(json_strings(json.loads(text))))]
    return [(fmt, text)]


def _member_text(name: str, data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if name.endswith(".json"):
        return "\n".join(json_strings(json.loads(text)))
    if name.endswith(".html"):
        return visible_html(text)
    return text
