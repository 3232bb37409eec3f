"""Text identity: normalization and the fingerprints of claims and passages.

A claim's fingerprint is the sha256 of its normalized text (:func:`normalize_text`), a
passage's the sha256 of its exact characters. Word lists, the sentence splitter and the
stemmer live in :mod:`research.pipeline.language`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Unicode NFKC, lower case, collapsed whitespace: the identity of a proposition."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def claim_fingerprint(text: str) -> str:
    """sha256 of the normalized claim text (a reworded claim gets a new fingerprint)."""
    return sha256_hex(normalize_text(text))


def passage_fingerprint(text: str) -> str:
    """sha256 of the exact passage text: quotes bind to these characters, so no folding."""
    return sha256_hex(text)
