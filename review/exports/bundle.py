"""The ZIP reproducibility bundle, and its offline verifier.

Layout (every file but the manifest is listed in ``manifest.json`` with its sha256)::

    manifest.json            format, report code/version/content hash, file -> sha256
    README.txt               what this is and how to re-check it
    report/report.md|.html|.json   the report (json: the frozen document)
    plan_version.json        plan, plan version content and hash
    run.json                 run configuration and its hash, stage notes
    claims.json              approved claims (text, fingerprint, decisions), the
                             excluded ones (code, verdict, reasons; never their text)
                             and the candidates set aside at mining (reason, offsets)
    evidence.json            quotes with offsets, snapshot and passage hashes
    snapshots.json           snapshot identity and hashes; texts in snapshots/<sha256>.txt
    decisions.json           the review audit log
    sources.bib, sources.csl.json

The archive is deterministic: sorted entries, fixed timestamps, so the same report
exports to the same bytes. ``verify_bundle`` needs nothing but the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

FORMAT = "evidence-bureau-bundle/1"
MANIFEST = "manifest.json"
_EPOCH = (1980, 1, 1, 0, 0, 0)

README = """Evidence Bureau reproducibility bundle ({format})

Report {code} version {version}: {title}

Re-check it offline with `python manage.py verify_bundle THIS.zip`, or by hand:
1. every file's sha256 equals its entry in manifest.json;
2. every snapshots/<sha256>.txt hashes to its name;
3. for every row of evidence.json, the snapshot text from quote_start to quote_end
   (Python string offsets, i.e. Unicode code points) equals the quote, and the text from
   passage_start to passage_end hashes to passage_sha256;
4. every claim the report cites is in claims.json, approved, with an approval as its
   latest decision.
"""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def build_bundle(
    *,
    document: dict[str, Any],
    report: dict[str, Any],
    markdown: str,
    html: str,
    plan_version: dict[str, Any],
    run: dict[str, Any],
    claims: dict[str, Any],
    snapshots: list[dict[str, Any]],
    bibtex: str,
    csl: str,
) -> bytes:
    """Write the ZIP. ``snapshots`` rows carry their ``text``; it goes into its own file."""
    files: dict[str, bytes] = {
        "README.txt": README.format(
            format=FORMAT, code=report["code"], version=report["version"], title=report["title"]
        ).encode(),
        "report/report.md": markdown.encode(),
        "report/report.html": html.encode(),
        "report/report.json": _json(document),
        "plan_version.json": _json(plan_version),
        "run.json": _json(run),
        "claims.json": _json(claims),
        "evidence.json": _json(document["appendix_b"]),
        "decisions.json": _json(document["appendix_c"]),
        "sources.bib": bibtex.encode(),
        "sources.csl.json": csl.encode(),
    }
    index = []
    for row in snapshots:
        path = f"snapshots/{row['text_sha256']}.txt"
        files[path] = row["text"].encode()
        index.append({k: v for k, v in row.items() if k != "text"} | {"path": path})
    files["snapshots.json"] = _json(index)
    manifest = {
        "format": FORMAT,
        "report": report,
        "files": {path: sha256_bytes(data) for path, data in sorted(files.items())},
    }
    files[MANIFEST] = _json(manifest)
    return _zip(files)


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[path])
    return buffer.getvalue()


# --- offline verification -------------------------------------------------------------


class BundleUnreadable(Exception):
    pass


def verify_bundle(path: str | Path) -> list[str]:
    """Every problem found in the bundle, each naming the file or claim; [] when sound."""
    files = _read(path)
    manifest = _load(files, MANIFEST)
    problems = _check_manifest(files, manifest)
    document = _load(files, "report/report.json")
    claims = _load(files, "claims.json")
    texts, snapshot_problems = _snapshot_texts(files, document)
    problems += snapshot_problems
    problems += _check_evidence(document, _load(files, "evidence.json"), texts)
    problems += _check_claims(document, claims)
    report_hash = manifest.get("report", {}).get("content_hash")
    if report_hash and sha256_bytes(files.get("report/report.md", b"")) != report_hash:
        problems.append("report/report.md does not match the report's content hash")
    return problems


def _read(path: str | Path) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(path) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    except (OSError, zipfile.BadZipFile) as exc:
        raise BundleUnreadable(f"{path}: not a readable ZIP ({exc})") from exc


def _load(files: dict[str, bytes], name: str) -> Any:
    if name not in files:
        raise BundleUnreadable(f"{name} is missing from the bundle")
    try:
        return json.loads(files[name])
    except ValueError as exc:
        raise BundleUnreadable(f"{name} is not valid JSON ({exc})") from exc


def _check_manifest(files: dict[str, bytes], manifest: dict[str, Any]) -> list[str]:
    problems = []
    if manifest.get("format") != FORMAT:
        problems.append(f"{MANIFEST}: unknown format {manifest.get('format')!r}")
    listed: dict[str, str] = manifest.get("files", {})
    for name, expected in sorted(listed.items()):
        if name not in files:
            problems.append(f"{name}: listed in the manifest but missing")
        elif sha256_bytes(files[name]) != expected:
            problems.append(f"{name}: sha256 differs from the manifest")
    for name in sorted(set(files) - set(listed) - {MANIFEST}):
        problems.append(f"{name}: not listed in the manifest")
    return problems


def _citing(document: dict[str, Any], snapshot_sha: str) -> str:
    claims = _claim_names(document)
    cited = sorted(
        {
            row["claim_code"]
            for row in document["appendix_b"]
            if row["snapshot_sha256"] == snapshot_sha
        }
    )
    return ", ".join(claims.get(code, code) for code in cited) or "no claim"


def _claim_names(document: dict[str, Any]) -> dict[str, str]:
    return {c["code"]: f"claim {c['label']} ({c['code']})" for c in document["claims"]}


def _snapshot_texts(
    files: dict[str, bytes], document: dict[str, Any]
) -> tuple[dict[str, str], list[str]]:
    """sha256 -> text for each snapshot file; a file that fails its hash names its claims."""
    texts, problems = {}, []
    for sha in sorted({row["snapshot_sha256"] for row in document["appendix_b"]}):
        data = files.get(f"snapshots/{sha}.txt")
        if data is None:
            problems.append(f"snapshot {sha[:12]} is missing; cited by {_citing(document, sha)}")
            continue
        if sha256_bytes(data) != sha:
            problems.append(
                f"snapshot {sha[:12]} text does not hash to its sha256; "
                f"cited by {_citing(document, sha)}"
            )
        texts[sha] = data.decode("utf-8", errors="replace")
    return texts, problems


def _check_evidence(
    document: dict[str, Any], evidence: list[dict[str, Any]], texts: dict[str, str]
) -> list[str]:
    names = _claim_names(document)
    problems = []
    if evidence != document["appendix_b"]:
        problems.append("evidence.json differs from the report's evidence table")
    for row in document["appendix_b"]:
        text = texts.get(row["snapshot_sha256"])
        if text is None:
            continue
        who = names.get(row["claim_code"], f"claim {row['claim_code']}")
        at = f"[{row['quote_start']}:{row['quote_end']}]"
        if text[row["quote_start"] : row["quote_end"]] != row["quote"]:
            problems.append(
                f"{who}: quote {row['label']} does not match snapshot "
                f"{row['snapshot_sha256'][:12]} at {at}"
            )
        passage = text[row["passage_start"] : row["passage_end"]]
        if sha256_bytes(passage.encode()) != row["passage_sha256"]:
            problems.append(f"{who}: passage of {row['label']} no longer matches its hash")
    return problems


def _check_claims(document: dict[str, Any], claims: dict[str, Any]) -> list[str]:
    """Every claim a sentence cites is approved in claims.json, with the same fingerprint."""
    approved = {c["code"]: c for c in claims.get("approved", [])}
    excluded = {c["code"] for c in claims.get("excluded", [])}
    frozen = {c["code"]: c for c in document["claims"]}
    problems = []
    cited = {
        code
        for section in document["sections"]
        for sentence in section["sentences"]
        for code in sentence["claim_codes"]
    }
    for code in sorted(cited):
        name = _claim_names(document).get(code, f"claim {code}")
        record = approved.get(code)
        if record is None or code in excluded or code not in frozen:
            problems.append(f"{name}: cited by the report but not an approved claim")
        elif record.get("review_state") != "approved" or record.get("last_action") != "approve":
            problems.append(f"{name}: cited by the report but its latest decision is not approval")
        elif record.get("fingerprint") != frozen[code]["fingerprint"]:
            problems.append(f"{name}: fingerprint differs from the report's")
    return problems
