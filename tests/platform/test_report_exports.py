"""The report document builder and its exporters read typed records only (issue 24).

Measured from the import statements alone (``ast``; nothing is imported): no module under
``reports/exports/`` imports ``django.db``, a ``models`` module, or the planner. What a
report needs from the database and from the planner is loaded once by ``reports.inputs``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

EXPORTS = Path(__file__).resolve().parents[2] / "reports" / "exports"
FORBIDDEN = re.compile(r"^(django\.db|research\.pipeline\.planner|(\w+\.)*models)(\.|$)")


def imported_names(path: Path) -> list[str]:
    """Every module an import statement names, a ``from x import y`` as ``x`` and ``x.y``."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_it_finds_the_exports():
    assert {"document.py", "answer.py", "citations.py"} <= {p.name for p in EXPORTS.glob("*.py")}


def test_it_keeps_the_ledger_and_the_planner_out_of_the_exports():
    offending = sorted(
        f"{path.name}: {name}"
        for path in EXPORTS.rglob("*.py")
        for name in imported_names(path)
        if FORBIDDEN.match(name)
    )
    assert offending == []


def test_it_would_catch_a_models_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from ledger.models import Claim\nimport django.db.models\n"
        "from research.pipeline import planner\nfrom reports.exports.facts import SUPPORTS\n"
    )
    assert [n for n in imported_names(module) if FORBIDDEN.match(n)] == [
        "ledger.models",
        "ledger.models.Claim",
        "django.db.models",
        "research.pipeline.planner",
    ]
