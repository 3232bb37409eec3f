"""Stage adapters: load rows, call the pure pipeline stages, save through services."""

from __future__ import annotations
