"""Offline verification of a reproducibility bundle, in bounded memory.

``verify_bundle(path, public_key)`` needs the file and a trusted public key (given, else
this instance's). It returns the problems found, each naming the file or the claim, and
stops after the first check that fails (``keep_going``, ``verify_bundle --all``, runs
them all); the checks, in order:

0. the ZIP itself: each entry named once, by a plain relative path (two entries of one
   name, one read by ``zipfile`` and the other shown by ``unzip``, refuse the bundle),
   no damaged entry, the JSON members well formed;

1. the manifest's signature, by the trusted key (unsigned, another key, a bad
   signature: each says so) — a bundle rewritten consistently, hashes and all, fails
   here;
2. every entry's sha256 against the manifest, and no unlisted entry;
3. every snapshot file against its name; every cited quote at its offsets and every
   passage span against its hash;
4. ``evidence.json`` equals the report's evidence table; ``report.md`` matches the
   report's content hash;
5. every reported claim's text against its fingerprint, and every claim a sentence
   cites is approved in ``claims.json`` with the same fingerprint.

Memory: entries are streamed in 1 MiB chunks (hashes, and snapshot texts decoded
incrementally while quote and passage spans are hashed on the fly); only the JSON
members are parsed whole, each refused above ``MAX_JSON_BYTES``. A 100 MB bundle is
checked in tens of megabytes (docs/reports.md).
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from reports.exports.bundle import FORMAT, MANIFEST, SIGNATURE, UNLISTED, BundleClaims
from reports.exports.records import EvidenceRow, ReportDocument, UnsupportedDocument
from reports.signing import (
    KeyUnreadable,
    key_id,
    load_public_key,
    public_key_b64,
    signature_valid,
)
from research.pipeline.text import claim_fingerprint

CHUNK = 1 << 20
MAX_JSON_BYTES = 64 << 20
JSON_MEMBERS = ("report/report.json", "claims.json", "evidence.json")


class BundleUnreadable(Exception):
    """Not a bundle this code can check at all (not a ZIP, no manifest, bad JSON)."""


@dataclass
class Span:
    """A code-point span of a snapshot text whose UTF-8 bytes must hash to ``expected``."""

    start: int
    end: int
    expected: str
    problem: str
    hasher: Any = field(default_factory=hashlib.sha256)


def verify_bundle(
    path: str | Path, public_key: Ed25519PublicKey | None, *, keep_going: bool = False
) -> list[str]:
    """Every problem found in the bundle (see the module docstring); [] when sound.

    It stops at the first check that fails: nothing a failed signature covers is worth
    reading (a forged bundle may be made large to be slow), so a bundle whose signature
    fails — unsigned, another key, no trusted key, a changed manifest — is not read
    further. ``keep_going`` (``verify_bundle --all``) runs every check anyway, to see
    everything wrong with a bundle one has reasons to read. ``public_key`` None means
    there is no trusted key: the signature check fails, saying so.

    Raises :class:`BundleUnreadable` (one line) for what cannot be checked at all: not a
    ZIP, a damaged entry, two entries of one name or a name no bundle uses, a missing or
    malformed JSON member.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise BundleUnreadable(f"{path}: not a readable ZIP ({exc})") from exc
    with archive:
        try:
            return _verify(archive, public_key, keep_going)
        except DAMAGED as exc:
            raise BundleUnreadable(f"{path}: a damaged ZIP entry ({exc})") from exc


# What reading a corrupt entry raises: a bad CRC, truncated or invalid deflate data, an
# unsupported compression method, an encrypted entry.
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)


def _verify(
    archive: zipfile.ZipFile, public_key: Ed25519PublicKey | None, keep_going: bool
) -> list[str]:
    names = _member_names(archive)
    manifest_bytes = _read_capped(archive, names, MANIFEST)
    manifest = _parse(MANIFEST, manifest_bytes)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files", {}), dict):
        raise BundleUnreadable(f"{MANIFEST} is not a bundle manifest (a JSON object with files)")
    problems = _check_signature(archive, names, manifest, manifest_bytes, public_key)
    if manifest.get("format") != FORMAT:
        problems.append(f"{MANIFEST}: unknown format {manifest.get('format')!r}")
    if problems and not keep_going:
        return problems
    document = _document(archive, names)
    problems += _check_claims(document, _claims(archive, names))
    evidence = _parse("evidence.json", _read_capped(archive, names, "evidence.json"))
    if evidence != [row.model_dump(mode="json") for row in document.appendix_b]:
        problems.append("evidence.json differs from the report's evidence table")
    listed: dict[str, Any] = manifest.get("files", {})
    problems += _check_names(names, listed)
    if problems and not keep_going:
        return problems
    problems += _check_entries(archive, names, listed, _spans(document), document, keep_going)
    report = manifest.get("report")
    report_hash = report.get("content_hash") if isinstance(report, dict) else None
    if listed.get("report/report.md") != report_hash:
        problems.append("report/report.md does not match the report's content hash")
    return problems


def trusted_key(given: str | None) -> Ed25519PublicKey | None:
    """The key named on the command line, else this instance's (None if it has none)."""
    from reports.signing import instance_public_key

    if given:
        try:
            return load_public_key(given)
        except KeyUnreadable as exc:
            raise BundleUnreadable(str(exc)) from exc
    return instance_public_key()


# --- reading --------------------------------------------------------------------------


def _member_names(archive: zipfile.ZipFile) -> set[str]:
    """The entries' names, each once and each a plain relative path, or a refusal.

    Two entries of one name are how a forged file hides: ``zipfile`` reads the last,
    ``unzip`` and most viewers show the first, so no check on one proves the other.
    """
    names: set[str] = set()
    for name in archive.namelist():
        if name in names:
            raise BundleUnreadable(
                f"the bundle holds two entries named {name}: a bundle never does (one may "
                "be a forgery shown in place of the other)"
            )
        parts = name.split("/")
        if name.startswith("/") or "\\" in name or ".." in parts or "" in parts[:-1]:
            raise BundleUnreadable(f"{name!r} is not a name a bundle uses (absolute or ..)")
        names.add(name)
    return names


def _read_capped(archive: zipfile.ZipFile, names: set[str], name: str) -> bytes:
    if name not in names:
        raise BundleUnreadable(f"{name} is missing from the bundle")
    if archive.getinfo(name).file_size > MAX_JSON_BYTES:
        raise BundleUnreadable(f"{name} is larger than {MAX_JSON_BYTES >> 20} MiB")
    with archive.open(name) as handle:
        data = handle.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise BundleUnreadable(f"{name} is larger than {MAX_JSON_BYTES >> 20} MiB")
    return data


def _parse(name: str, data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise BundleUnreadable(f"{name} is not valid JSON ({exc})") from exc
    except RecursionError:
        raise BundleUnreadable(f"{name} is not valid JSON (nested too deeply)") from None


def _document(archive: zipfile.ZipFile, names: set[str]) -> ReportDocument:
    data = _parse("report/report.json", _read_capped(archive, names, "report/report.json"))
    try:
        return ReportDocument.from_json(data)
    except UnsupportedDocument as exc:
        raise BundleUnreadable(f"report/report.json: {exc}") from exc
    except RecursionError:
        raise BundleUnreadable("report/report.json is malformed (nested too deeply)") from None


def _claims(archive: zipfile.ZipFile, names: set[str]) -> BundleClaims:
    data = _parse("claims.json", _read_capped(archive, names, "claims.json"))
    try:
        return BundleClaims.model_validate(data)
    except ValidationError as exc:
        raise BundleUnreadable(f"claims.json is malformed ({exc})") from exc
    except RecursionError:
        raise BundleUnreadable("claims.json is malformed (nested too deeply)") from None


# --- 1. signature ---------------------------------------------------------------------


def _check_signature(
    archive: zipfile.ZipFile,
    names: set[str],
    manifest: dict[str, Any],
    manifest_bytes: bytes,
    trusted: Ed25519PublicKey | None,
) -> list[str]:
    signing = manifest.get("signing") or {}
    if SIGNATURE not in names:
        return [f"{SIGNATURE} is missing: the bundle is not signed"]
    if trusted is None:
        return [
            "no trusted public key to check the signature with: pass --public-key "
            "(the signing instance's /about/ page shows it)"
        ]
    if signing.get("public_key") != public_key_b64(trusted):
        return [
            f"signed with another key (key id {str(signing.get('key_id', '?'))[:16]}…, "
            f"trusted key id {key_id(trusted)[:16]}…)"
        ]
    try:
        signature = base64.b64decode(_read_capped(archive, names, SIGNATURE).strip(), validate=True)
    except ValueError:
        return [f"{SIGNATURE} is not base64"]
    if not signature_valid(trusted, signature, manifest_bytes):
        return [f"{SIGNATURE} does not match {MANIFEST}: the manifest was changed after signing"]
    return []


# --- 2–4. entries, snapshots and spans ------------------------------------------------


def _claim_names(document: ReportDocument) -> dict[str, str]:
    return {c.code: f"claim {c.label} ({c.code})" for c in document.claims}


def _spans(document: ReportDocument) -> dict[str, list[Span]]:
    """Per snapshot sha256: the quote and passage spans its text must reproduce."""
    names = _claim_names(document)
    spans: dict[str, list[Span]] = {}
    for row in document.appendix_b:
        who = names.get(row.claim_code, f"claim {row.claim_code}")
        at = f"[{row.quote_start}:{row.quote_end}]"
        found = spans.setdefault(row.snapshot_sha256, [])
        found.append(
            Span(
                row.quote_start,
                row.quote_end,
                hashlib.sha256(row.quote.encode()).hexdigest(),
                f"{who}: quote {row.label} does not match snapshot "
                f"{row.snapshot_sha256[:12]} at {at}",
            )
        )
        for passage in row.passages:
            found.append(
                Span(
                    passage.passage_start,
                    passage.passage_end,
                    passage.passage_sha256,
                    f"{who}: {passage.kind} passage of {row.label} "
                    f"[{passage.passage_start}:{passage.passage_end}] no longer matches its hash",
                )
            )
    return spans


def _check_names(names: set[str], listed: dict[str, Any]) -> list[str]:
    """Every listed entry is there, and nothing else but the manifest and signature."""
    problems = [
        f"{name}: listed in the manifest but missing"
        for name in sorted(listed)
        if name not in names
    ]
    for name in sorted(names - set(listed) - UNLISTED):
        problems.append(f"{name}: not listed in the manifest")
    return problems


def _check_entries(
    archive: zipfile.ZipFile,
    names: set[str],
    listed: dict[str, Any],
    spans: dict[str, list[Span]],
    document: ReportDocument,
    keep_going: bool,
) -> list[str]:
    problems = []
    for sha in sorted(spans):
        if f"snapshots/{sha}.txt" not in names:
            problems.append(f"snapshot {sha[:12]} is missing; cited by {_citing(document, sha)}")
    for name in sorted(names & set(listed)):
        sha = name.removeprefix("snapshots/").removesuffix(".txt")
        wanted = spans.get(sha, []) if name.startswith("snapshots/") else []
        digest = _stream(archive, name, wanted)
        if digest != listed[name]:
            problems.append(f"{name}: sha256 differs from the manifest")
        if name.startswith("snapshots/") and digest != sha:
            problems.append(
                f"snapshot {sha[:12]} text does not hash to its sha256; "
                f"cited by {_citing(document, sha)}"
            )
        problems += [s.problem for s in wanted if s.hasher.hexdigest() != s.expected]
        if problems and not keep_going:
            break
    return problems


def _stream(archive: zipfile.ZipFile, name: str, spans: list[Span]) -> str:
    """sha256 of an entry's bytes; on the way, feed each span the text it covers."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = sorted(spans, key=lambda s: s.start)
    active: list[Span] = []
    pos = 0
    with archive.open(name) as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            if spans:
                pos = _feed(decoder.decode(chunk), pos, pending, active)
    if spans:
        _feed(decoder.decode(b"", final=True), pos, pending, active)
    return digest.hexdigest()


def _feed(text: str, pos: int, pending: list[Span], active: list[Span]) -> int:
    """Hash the part of ``text`` (code points pos…) that each open span covers."""
    end = pos + len(text)
    while pending and pending[0].start < end:
        active.append(pending.pop(0))
    for span in active:
        lo, hi = max(span.start, pos), min(span.end, end)
        if lo < hi:
            span.hasher.update(text[lo - pos : hi - pos].encode())
    active[:] = [s for s in active if s.end > end]
    return end


def _citing(document: ReportDocument, snapshot_sha: str) -> str:
    names = _claim_names(document)
    cited = sorted({r.claim_code for r in document.appendix_b if r.snapshot_sha256 == snapshot_sha})
    return ", ".join(names.get(code, code) for code in cited) or "no claim"


# --- 5. claims ------------------------------------------------------------------------


def _check_claims(document: ReportDocument, claims: BundleClaims) -> list[str]:
    """Texts match fingerprints; every cited claim is approved with the same fingerprint."""
    names = _claim_names(document)
    approved = {c.code: c for c in claims.approved}
    excluded = {c.code for c in claims.excluded}
    frozen = {c.code: c for c in document.claims}
    problems = []
    for claim in [*document.claims, *claims.approved]:
        if claim_fingerprint(claim.text) != claim.fingerprint:
            where = "claims.json" if claim in claims.approved else "report/report.json"
            problems.append(
                f"{names.get(claim.code, claim.code)}: text in {where} does not match its "
                "fingerprint"
            )
    problems += _evidence_fingerprints(document.appendix_b, frozen, names)
    for code in sorted(document.cited_claim_codes()):
        name = names.get(code, f"claim {code}")
        record = approved.get(code)
        if record is None or code in excluded or code not in frozen:
            problems.append(f"{name}: cited by the report but not an approved claim")
        elif record.review_state != "approved" or record.last_action != "approve":
            problems.append(f"{name}: cited by the report but its latest decision is not approval")
        elif record.fingerprint != frozen[code].fingerprint or record.text != frozen[code].text:
            problems.append(f"{name}: text or fingerprint differs from the report's")
    return problems


def _evidence_fingerprints(
    rows: list[EvidenceRow], frozen: dict[str, Any], names: dict[str, str]
) -> list[str]:
    problems = []
    for row in rows:
        claim = frozen.get(row.claim_code)
        if claim is not None and claim.fingerprint != row.claim_fingerprint:
            problems.append(
                f"{names[row.claim_code]}: evidence {row.label} was bound to another claim text"
            )
    return problems
