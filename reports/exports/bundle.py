"""The ZIP reproducibility bundle: layout, deterministic writing and the signed manifest.

Layout (every file but ``manifest.json`` and ``manifest.sig`` is listed in the manifest
with its sha256)::

    manifest.json            format, report code/version/content hash, the fingerprint
                             rule, the signing key, file -> sha256
    manifest.sig             Ed25519 signature of manifest.json's bytes (base64)
    README.txt               what this is and how to re-check it
    report/report.md|.html|.json   the report (json: the frozen document)
    plan_version.json        plan, plan version content and hash
    run.json                 run configuration and its hash, stage notes
    claims.json              approved claims (text, fingerprint, decisions), the
                             excluded ones (code, verdict, reasons; never their text)
                             and the candidates set aside at mining (reason, offsets)
    evidence.json            cited quotes with offsets, snapshot and passage hashes
    snapshots.json           snapshot identity and hashes; texts in snapshots/<sha256>.txt
    decisions.json           the review audit log
    sources.bib, sources.csl.json
    audited/report.md|.html  an audit run only: the imported report's text, every sentence
                             marked, with the disposition ledger (review.audited)

The archive is deterministic: sorted entries, fixed timestamps, and Ed25519 signatures
are deterministic too, so the same report exports to the same bytes. The offline check
is ``reports.exports.verify``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from reports.exports.records import (
    AuditRow,
    ClaimRow,
    ExcludedRow,
    Record,
    ReportDocument,
    SetAsideRow,
)
from reports.signing import ALGORITHM, key_id, public_key_b64

FORMAT = "evidence-bureau-bundle/2"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
UNLISTED = frozenset({MANIFEST, SIGNATURE})
FINGERPRINT_RULE = (
    "claim fingerprint = sha256 of the UTF-8 text after Unicode NFKC, whitespace runs "
    "collapsed to one space, stripped, lower-cased"
)
_EPOCH = (1980, 1, 1, 0, 0, 0)

README = """Evidence Bureau reproducibility bundle ({format})

Report {code} version {version}: {title}

Re-check it offline with `python manage.py verify_bundle THIS.zip --public-key KEY`
(KEY: the signing instance's public key from its /about/ page; the instance that made
it can leave --public-key out), or by hand:
0. manifest.sig is the Ed25519 signature (base64) of manifest.json's exact bytes by the
   key in manifest.json "signing" — trust that key only if it is the instance's;
1. every file's sha256 equals its entry in manifest.json, and no file is unlisted;
2. every snapshots/<sha256>.txt hashes to its name;
3. for every row of evidence.json, the snapshot text from quote_start to quote_end
   (Python string offsets, i.e. Unicode code points) equals the quote, and for each of
   its passages the text from passage_start to passage_end hashes to passage_sha256;
4. every approved claim's text hashes to its fingerprint ({fingerprint});
5. every claim the report cites is in claims.json, approved, with an approval as its
   latest decision.
"""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def build_bundle(
    *,
    files: Mapping[str, bytes],
    snapshots: list[dict[str, Any]],
    report: dict[str, Any],
    key: Ed25519PrivateKey,
) -> bytes:
    """Write the ZIP: ``files`` as given, ``snapshots`` (rows with their ``text``) as
    snapshots/<sha256>.txt plus snapshots.json, a README, the manifest and its signature."""
    entries = dict(files)
    entries["README.txt"] = README.format(
        format=FORMAT,
        code=report["code"],
        version=report["version"],
        title=report["title"],
        fingerprint=FINGERPRINT_RULE,
    ).encode()
    index = []
    for row in snapshots:
        path = f"snapshots/{row['text_sha256']}.txt"
        entries[path] = row["text"].encode()
        index.append({k: v for k, v in row.items() if k != "text"} | {"path": path})
    entries["snapshots.json"] = to_json(index)
    public = key.public_key()
    manifest = to_json(
        {
            "format": FORMAT,
            "report": report,
            "fingerprint": FINGERPRINT_RULE,
            "signing": {
                "algorithm": ALGORITHM,
                "public_key": public_key_b64(public),
                "key_id": key_id(public),
            },
            "files": {path: sha256_bytes(data) for path, data in sorted(entries.items())},
        }
    )
    entries[MANIFEST] = manifest
    entries[SIGNATURE] = base64.b64encode(key.sign(manifest)) + b"\n"
    return _zip(entries)


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[path])
    return buffer.getvalue()


# --- claims.json --------------------------------------------------------------------


class ApprovedClaim(ClaimRow):
    """A reported claim in claims.json: its register row plus its decision history."""

    decisions: list[AuditRow]
    last_action: str


class BundleClaims(Record):
    approved: list[ApprovedClaim]
    excluded: list[ExcludedRow]
    set_aside_at_mining: list[SetAsideRow]


def bundle_claims(document: ReportDocument) -> BundleClaims:
    history: dict[str, list[AuditRow]] = {}
    for row in document.appendix_c:
        history.setdefault(row.claim_code, []).append(row)
    approved = []
    for claim in document.claims:
        rows = history.get(claim.code, [])
        approved.append(
            ApprovedClaim(
                **claim.model_dump(), decisions=rows, last_action=rows[-1].action if rows else ""
            )
        )
    return BundleClaims(
        approved=approved,
        excluded=document.appendix_a,
        set_aside_at_mining=document.appendix_a_set_aside,
    )
