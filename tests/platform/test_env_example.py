"""Every environment variable the code reads is documented in .env.example."""

from __future__ import annotations

import re

from tests.processes import BASE_DIR

READERS = re.compile(
    r"""(?:env(?:str|bool|int|float|list|secret|database)|os\.environ\.get|os\.environ\.setdefault)"""
    r"""\(\s*["']([A-Z][A-Z0-9_]+)["']"""
)
NOT_OURS = {
    "DJANGO_SETTINGS_MODULE",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "XDG_RUNTIME_DIR",
    "PYTHONUNBUFFERED",
    "EMBEDDED_PG",
    "CI",
}


def _documented() -> set[str]:
    text = (BASE_DIR / ".env.example").read_text()
    return set(re.findall(r"^([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


def test_it_documents_every_variable_the_code_reads():
    read: set[str] = set()
    for folder in ("config", "research", "ledger", "review"):
        for path in (BASE_DIR / folder).rglob("*.py"):
            read |= set(READERS.findall(path.read_text()))
    missing = sorted(read - NOT_OURS - _documented())
    assert missing == [], f"add to .env.example: {missing}"
