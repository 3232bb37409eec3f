"""The layering, measured from the import statements alone (``ast``; nothing is imported).

Every ``import`` and ``from … import`` in ``config/ research/ ledger/ review/ reports/`` counts,
including imports inside functions and under ``TYPE_CHECKING``: a lazy import is still a
dependency. Layers, lowest first, are :data:`LAYERS`; a module imports only its own
layer or lower ones, at most :data:`UPWARD_ALLOWED` exceptions, and no import circle.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
APPS = ("config", "research", "ledger", "review", "reports")

# Lowest first. A module belongs to the first layer with a matching pattern.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("settings", (r"config(\.(settings|env|embedded|procrastinate|serve))?$",)),
    ("pure steps and providers", (r"research\.(pipeline|providers)(\..+)?$",)),
    (
        "models",
        (
            r"(research|ledger|review|reports)(\.(models|apps|migrations)(\..+)?)?$",
            r"research\.(roles|progress|queue)$",
            r"review\.records$",  # the typed records review's models read and write
        ),
    ),
    ("training and benchmarks", (r"research\.bench(\..+)?$",)),
    ("ledger services", (r"ledger\.(services|readers)(\..+)?$", r"research\.retrieval$")),
    (
        "app services",
        (
            r"research\.services(\..+)?$",
            r"review\.(services|readers|diff|rundiffs|shadow|fragments|audits|audited)",
            r"reports\.(access|build|inputs|integrity|export|exports|signing|preview)(\..+)?$",
        ),
    ),
    ("stages", (r"research\.stages(\..+)?$",)),
    ("runner", (r"research\.runner$",)),
    ("tasks", (r"(research|ledger)\.tasks$",)),
    (
        "interfaces",
        (
            r"\w+\.(views|forms|urls|admin|consumers|routing|http)$",
            r"config\.(errors|limits|lockout)$",
            r"\w+\.templatetags(\..+)?$",
            r"\w+\.management(\..+)?$",
        ),
    ),
    ("entry points", (r"config\.(urls|asgi|wsgi|launcher)$",)),
)
UPWARD_ALLOWED = 2


@cache
def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for app in APPS:
        for path in sorted((BASE_DIR / app).rglob("*.py")):
            parts = list(path.relative_to(BASE_DIR).with_suffix("").parts)
            if "migrations" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _resolve(name: str) -> str | None:
    """The project module an import names (a package when the name is inside one)."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports() -> dict[str, frozenset[str]]:
    """Module -> the project modules it imports (itself excluded)."""
    mods = modules()
    graph: dict[str, frozenset[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {t for a in node.names if (t := _resolve(a.name))}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    target = full if full in mods else _resolve(base)
                    if target:
                        found.add(target)
        found.discard(name)
        graph[name] = frozenset(found)
    return graph


def layer_of(module: str) -> int:
    for index, (_, patterns) in enumerate(LAYERS):
        if any(re.match(p, module) for p in patterns):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def import_circles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph = imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def upward_imports() -> list[str]:
    return sorted(
        f"{m} ({LAYERS[layer_of(m)][0]}) -> {t} ({LAYERS[layer_of(t)][0]})"
        for m, targets in imports().items()
        for t in targets
        if layer_of(t) > layer_of(m)
    )


def test_it_places_every_module_in_a_layer():
    for module in modules():
        layer_of(module)


def test_it_has_no_import_circles():
    assert import_circles() == []


def test_it_imports_a_higher_layer_at_most_twice():
    upward = upward_imports()
    assert len(upward) <= UPWARD_ALLOWED, "\n".join(upward)


def test_it_keeps_the_ledger_below_the_research_pipeline_runner():
    forbidden = re.compile(r"research\.(stages|services|retrieval|runner)(\.|$)")
    offending = sorted(
        f"{m} -> {t}"
        for m, targets in imports().items()
        if m.startswith("ledger")
        for t in targets
        if forbidden.match(t)
    )
    assert offending == []


def test_it_keeps_review_below_reports():
    """Reports read review's decisions, gate and diffs; review never imports reports."""
    offending = sorted(
        f"{m} -> {t}"
        for m, targets in imports().items()
        if m.split(".")[0] == "review"
        for t in targets
        if t.split(".")[0] == "reports"
    )
    assert offending == []


def test_it_imports_modules_statically():
    """No helper that imports a module by name and may return nothing."""
    for name, path in modules().items():
        source = path.read_text()
        assert "optional_module" not in source, name
        assert "import_module(" not in source, name


def test_it_has_exactly_one_sentence_splitter():
    """The boundary pattern ("[.!?]") is compiled in one module:
    research.pipeline.language.sentences."""
    holders = sorted(
        name
        for name, path in modules().items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "[.!?]" in node.value
    )
    assert holders == ["research.pipeline.language.sentences"]
