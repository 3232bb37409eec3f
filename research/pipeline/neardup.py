"""Near-duplicate detection: MinHash signatures over word shingles, LSH band keys.

Copies of one story (a syndicated article, a reprinted press release, a lightly edited
copy) share most of their word 3-grams, so their MinHash signatures agree on most
positions. Signatures use a fixed seed, so the same text always gives the same
signature and the same band keys in every process: keys can be stored and looked up
in the database (``Source.lsh_bands``) instead of keeping an LSH index in memory.

Pure functions, no ORM: ``signature``, ``band_keys``, ``similarity`` and ``cluster``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from datasketch import LeanMinHash, MinHash

SEED = 1
NUM_PERM = 128
BANDS = 32  # 32 bands x 4 rows: P(candidate) is 0.87 at Jaccard 0.5 and 0.23 at 0.3
ROWS = NUM_PERM // BANDS
THRESHOLD = 0.5  # estimated Jaccard of shingle sets at or above which two texts are copies
SHINGLE = 3

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Signature:
    hashvalues: tuple[int, ...]

    def to_bytes(self) -> bytes:
        return np.asarray(self.hashvalues, dtype=np.uint64).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> Signature:
        return cls(tuple(int(v) for v in np.frombuffer(data, dtype=np.uint64)))


def shingles(text: str, size: int = SHINGLE) -> set[bytes]:
    """Word ``size``-grams of the lower-cased text (whole text if it is shorter)."""
    words = _WORD.findall(text.lower())
    if len(words) <= size:
        return {" ".join(words).encode()} if words else set()
    return {" ".join(words[i : i + size]).encode() for i in range(len(words) - size + 1)}


def signature(text: str) -> Signature:
    minhash = MinHash(num_perm=NUM_PERM, seed=SEED)
    grams = sorted(shingles(text))
    if grams:
        minhash.update_batch(grams)
    return Signature(tuple(int(v) for v in LeanMinHash(minhash).hashvalues))


def band_keys(sig: Signature) -> list[int]:
    """One signed 64-bit key per band (band index mixed in), for an int8[] column."""
    keys = []
    values = np.asarray(sig.hashvalues, dtype=np.uint64)
    for band in range(BANDS):
        digest = hashlib.blake2b(
            values[band * ROWS : (band + 1) * ROWS].tobytes(),
            digest_size=8,
            person=b"band%04d" % band,
        ).digest()
        keys.append(int.from_bytes(digest, "big", signed=True))
    return keys


def similarity(a: Signature, b: Signature) -> float:
    """Estimated Jaccard similarity of the two shingle sets."""
    left = np.asarray(a.hashvalues, dtype=np.uint64)
    right = np.asarray(b.hashvalues, dtype=np.uint64)
    return float(np.count_nonzero(left == right)) / NUM_PERM


def cluster(
    items: Sequence[tuple[str, Signature]],
    known: Iterable[tuple[str, Signature, str]] = (),
    threshold: float = THRESHOLD,
) -> dict[str, str]:
    """Assign each new item a cluster id.

    ``items`` are ``(key, signature)`` in a deterministic order; ``known`` are already
    clustered ``(key, signature, cluster_id)``. An item joins the cluster of the most
    similar earlier item (known or new) at or above ``threshold``; otherwise it starts
    its own cluster named after its key. Returns ``{key: cluster_id}`` for ``items``.
    """
    buckets: dict[int, list[tuple[Signature, str]]] = {}

    def add(sig: Signature, cluster_id: str) -> None:
        for key in band_keys(sig):
            buckets.setdefault(key, []).append((sig, cluster_id))

    for _, sig, cluster_id in known:
        add(sig, cluster_id)
    result: dict[str, str] = {}
    for key, sig in items:
        best, best_score = "", threshold
        for band in band_keys(sig):
            for other, other_cluster in buckets.get(band, ()):
                score = similarity(sig, other)
                if score > best_score or (score == best_score and not best):
                    best, best_score = other_cluster, score
        result[key] = best or cluster_id_for(key)
        add(sig, result[key])
    return result


def cluster_id_for(key: str) -> str:
    """A short stable cluster id derived from the founding member's key."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]
