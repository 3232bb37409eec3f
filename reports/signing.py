"""The instance's Ed25519 key that signs report bundles, and reading public keys.

The private key lives in the PEM file ``settings.BUNDLE_SIGNING_KEY`` (default
``.data/signing/bundle-ed25519.pem``, git-ignored; set the variable to a path on a
volume every web process shares). It is generated on first use, written with mode 0600
in a folder with mode 0700, and created atomically: two processes starting at once end
up with the same key. The public key is shown on the about page and written into every
bundle; ``verify_bundle`` trusts only a key it is given or this instance's own.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from django.conf import settings

ALGORITHM = "ed25519"


class KeyUnreadable(Exception):
    """A key file or key text that is not an Ed25519 key; the message says which."""


def key_path() -> Path:
    return Path(settings.BUNDLE_SIGNING_KEY)


def instance_private_key() -> Ed25519PrivateKey:
    """This instance's signing key, generated (atomically, mode 0600) on first use."""
    path = key_path()
    if not path.exists():
        _create_key(path)
    return _read_private_key(path)


def instance_public_key() -> Ed25519PublicKey | None:
    """This instance's public key; None when no key was ever generated here."""
    return signing_public_key() if key_path().exists() else None


def signing_public_key() -> Ed25519PublicKey:
    """The public half of the signing key (generating the key on first use)."""
    return instance_private_key().public_key()


def _create_key(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        os.chmod(tmp, 0o600)
        with contextlib.suppress(FileExistsError):  # another process was first: keep theirs
            os.link(tmp, path)
    finally:
        os.unlink(tmp)


def _read_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise KeyUnreadable(f"{path}: not a readable PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyUnreadable(f"{path}: not an Ed25519 private key")
    return key


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_key_b64(key: Ed25519PublicKey) -> str:
    """The 32 raw public-key bytes in base64: what the about page and bundles show."""
    return base64.b64encode(raw_public(key)).decode()


def public_key_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def key_id(key: Ed25519PublicKey) -> str:
    """sha256 of the raw public key: a short name to compare keys by."""
    return hashlib.sha256(raw_public(key)).hexdigest()


def load_public_key(value: str) -> Ed25519PublicKey:
    """A public key from a PEM file, a file holding base64, or base64 text itself."""
    text = value
    path = Path(value)
    try:
        if path.is_file():
            text = path.read_text()
    except OSError as exc:
        raise KeyUnreadable(f"{value}: cannot read ({exc})") from exc
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
            if not isinstance(key, Ed25519PublicKey):
                raise KeyUnreadable(f"{value}: not an Ed25519 public key")
            return key
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError) as exc:
        raise KeyUnreadable(
            f"{value[:60]}: not an Ed25519 public key (PEM, or 32 bytes in base64)"
        ) from exc


def sign(data: bytes) -> bytes:
    return instance_private_key().sign(data)


def signature_valid(key: Ed25519PublicKey, signature: bytes, data: bytes) -> bool:
    try:
        key.verify(signature, data)
    except InvalidSignature:
        return False
    return True
