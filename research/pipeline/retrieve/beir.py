"""Reading a BEIR-format benchmark: queries.jsonl and qrels/<split>.tsv.

Only query ids and texts are read from queries.jsonl: its ``metadata`` (SciFact puts the
gold evidence there) is never handed to the system under test.
"""

from __future__ import annotations

import json
from pathlib import Path


def load_queries(directory: Path) -> dict[str, str]:
    out = {}
    with (directory / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                out[str(record["_id"])] = str(record["text"])
    return out


def load_qrels(directory: Path, split: str) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: relevance}}``; a header line and CRLF endings are fine."""
    qrels: dict[str, dict[str, int]] = {}
    with (directory / "qrels" / f"{split}.tsv").open(encoding="utf-8", newline=None) as handle:
        for line in handle:
            parts = line.strip().split("\t")
            if len(parts) < 3 or not parts[2].lstrip("-").isdigit():
                continue  # header or blank line
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels
