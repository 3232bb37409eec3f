"""Helpers for bundle tests: read, rewrite and verify ZIP bundles."""

from __future__ import annotations

import io
import json
import zipfile

from reports.exports.bundle import MANIFEST, SIGNATURE, sha256_bytes
from reports.exports.verify import verify_bundle
from reports.signing import signing_public_key


def bundle_problems(path, key=None, *, keep_going=False):
    """verify_bundle against this instance's key (the one that signed test bundles)."""
    return verify_bundle(path, key or signing_public_key(), keep_going=keep_going)


def zip_text(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def write_zip(files):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def rewrite_zip(data, changes):
    files = zip_text(data)
    files.update(changes)
    return write_zip(files)


def remanifest(files, *, sign=None):
    """Re-hash every file into the manifest, as a forger would; ``sign`` (a private key)
    signs the new manifest, else the signature is dropped."""
    files = dict(files)
    files.pop(SIGNATURE, None)
    manifest = json.loads(files.pop(MANIFEST))
    manifest["files"] = {n: sha256_bytes(t.encode()) for n, t in sorted(files.items())}
    if "report/report.md" in files:
        manifest["report"]["content_hash"] = manifest["files"]["report/report.md"]
    if sign is not None:
        from reports.signing import key_id, public_key_b64

        manifest["signing"] = {
            "algorithm": "ed25519",
            "public_key": public_key_b64(sign.public_key()),
            "key_id": key_id(sign.public_key()),
        }
    body = json.dumps(manifest, indent=2, sort_keys=True)
    files[MANIFEST] = body
    if sign is not None:
        import base64

        files[SIGNATURE] = base64.b64encode(sign.sign(body.encode())).decode() + "\n"
    return files
