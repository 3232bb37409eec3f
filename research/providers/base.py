"""What every provider error carries: whether retrying can help."""

from __future__ import annotations


class ProviderError(Exception):
    """A provider failed. ``permanent=True`` means give up; False means retry may help."""

    def __init__(self, message: str, *, permanent: bool, provider: str = "") -> None:
        super().__init__(message)
        self.permanent = permanent
        self.provider = provider

    def __str__(self) -> str:
        prefix = f"{self.provider}: " if self.provider else ""
        kind = "permanent" if self.permanent else "retryable"
        return f"{prefix}{self.args[0]} ({kind})"
