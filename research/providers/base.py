"""What every provider error carries: whether retrying can help, and how often it was tried;
and the sha256 a model loader checks its shipped files against."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The file's sha256, read in 1 MiB blocks (a model's weights need not fit in memory)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ProviderError(Exception):
    """A provider failed. ``permanent=True`` means give up; False means retry may help.

    ``attempts`` is how many attempts the retry policy (``research.providers.retry``)
    made before this error ended them; the words say so when there was more than one.
    """

    def __init__(self, message: str, *, permanent: bool, provider: str = "") -> None:
        super().__init__(message)
        self.permanent = permanent
        self.provider = provider
        self.attempts = 1

    def __str__(self) -> str:
        prefix = f"{self.provider}: " if self.provider else ""
        kind = "permanent" if self.permanent else "retryable"
        tries = f"; gave up after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{prefix}{self.args[0]} ({kind}){tries}"
