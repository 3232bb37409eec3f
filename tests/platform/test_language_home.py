"""Every cue pattern and word list lives in ``research.pipeline.language`` (measured by ``ast``).

Outside ``research/pipeline/language/`` (and outside tests), no module of ``config/ research/
ledger/ review/`` may hold:

1. a ``re.compile`` whose pattern has 5 or more alternatives (``|`` outside a character
   class, counted over the literal parts of the pattern), or whose pattern is built with
   ``"|".join(...)``: an alternation built from a word list is a cue pattern;
2. a word set of 5 or more words: a ``set`` literal, a ``frozenset(...)`` or ``set(...)``
   call over literal strings, a literal string of 5+ words that is ``.split()`` or passed
   to a word-set builder (``_wordset("a b c d e")``), or a dict of 5+ words mapped to words
   bound to a vocabulary name (below: a table of opposites);
3. a list or tuple of 5+ literal lower-case strings when one of them is a phrase or
   the name it is bound to says it is a vocabulary (``…WORDS``, ``…CUES``, ``…VERBS``,
   ``…NOUNS``, ``…TERMS``, ``…PHRASES``, ``…HEDGES``).

A tuple of field names, enum values or table headers is none of these. The benchmark
commands in :data:`EXEMPT` write synthetic text from word lists; they read no text.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
APPS = ("config", "research", "ledger", "review")
HOME = Path("research", "pipeline", "language")
MIN_ALTERNATIVES = 5
MIN_WORDS = 5
WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*(?: [A-Za-z][A-Za-z'\-]*)*")
EXEMPT = frozenset(
    {
        Path("review", "management", "commands", "bench_ledger.py"),
        Path("review", "management", "commands", "bench_bundle.py"),
    }
)
VOCABULARY_NAME = re.compile(r"(WORDS|CUES|VERBS|NOUNS|TERMS|PHRASES|HEDGES)$")


def alternatives(pattern: str) -> int:
    """How many ``|``-separated alternatives a pattern has, character classes skipped."""
    count, index, in_class = 1, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "|":
            count += 1
        index += 1
    return count


def literal_text(node: ast.AST) -> str:
    """The literal parts of a string expression (f-strings and ``+`` joins included)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(literal_text(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return literal_text(node.left) + literal_text(node.right)
    return ""


def joins_alternation(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "join"
        and "|" in literal_text(n.func.value)
        for n in ast.walk(node)
    )


def strings(node: ast.AST) -> list[str] | None:
    """The strings of a literal collection, or None when an element is not a string."""
    if not isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return None
    out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return out if len(out) == len(node.elts) else None


def is_words(values: list[str]) -> bool:
    return len(values) >= MIN_WORDS and all(WORD.fullmatch(v) for v in values)


def spaced_words(node: ast.AST) -> bool:
    text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
    return len(text.split()) >= MIN_WORDS and all(WORD.fullmatch(w) for w in text.split())


def offences(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    bound: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if names and node.value is not None:
                for inner in ast.walk(node.value):
                    bound.setdefault(id(inner), names[0])
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "compile" and isinstance(func, ast.Attribute):
                if getattr(func.value, "id", "") == "re" and node.args:
                    pattern = node.args[0]
                    if alternatives(literal_text(pattern)) >= MIN_ALTERNATIVES:
                        found.append((line, "re.compile with 5+ alternatives"))
                    elif joins_alternation(pattern):
                        found.append((line, 're.compile of a "|".join(...) alternation'))
            elif name in {"frozenset", "set"} and node.args:
                values = strings(node.args[0])
                if values is not None and is_words(values):
                    found.append((line, f"{name} of {len(values)} words"))
            elif name == "split" and isinstance(func, ast.Attribute) and spaced_words(func.value):
                found.append((line, "a word list split from a string"))
            elif re.search("word|set", name, re.I) and any(spaced_words(a) for a in node.args):
                found.append((line, f"{name}() of a string of 5+ words"))
        elif isinstance(node, ast.Set):
            values = strings(node)
            if values is not None and is_words(values):
                found.append((line, f"a set of {len(values)} words"))
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            vals = [v.value for v in node.values if isinstance(v, ast.Constant)]
            key_words = [k for k in keys if isinstance(k, str)]
            val_words = [v for v in vals if isinstance(v, str)]
            if (
                VOCABULARY_NAME.search(bound.get(id(node), ""))
                and len(key_words) == len(val_words) == len(node.keys)
                and is_words(key_words)
                and is_words(val_words)
                and all(" " not in k for k in key_words)
            ):
                found.append((line, f"a table of {len(keys)} words"))
        elif isinstance(node, ast.List | ast.Tuple):
            values = strings(node)
            if values is None or not is_words(values):
                continue
            name = bound.get(id(node), "")
            phrases = any(" " in v for v in values) and all(v[:1].islower() for v in values)
            if phrases or VOCABULARY_NAME.search(name):
                found.append((line, f"a {type(node).__name__.lower()} of {len(values)} words"))
    return found


def offending_modules() -> list[str]:
    rows = []
    for app in APPS:
        for path in sorted((BASE_DIR / app).rglob("*.py")):
            relative = path.relative_to(BASE_DIR)
            if (
                "migrations" in relative.parts
                or relative.is_relative_to(HOME)
                or relative in EXEMPT
            ):
                continue
            for line, what in offences(ast.parse(path.read_text(), str(path))):
                rows.append(f"{relative}:{line}: {what}")
    return sorted(set(rows))


def test_it_finds_what_it_forbids():
    """The scanner catches each form it names (so an empty list below means something)."""
    source = """
import re
A = re.compile(r"(?:rose|fell|grew|dropped|climbed)")
B = re.compile("|".join(WORDS))
C = frozenset(["one", "two", "three", "four", "five"])
D = {"one", "two", "three", "four", "five"}
E = "one two three four five".split()
F = _wordset("one two three four five")
OPPOSITE_WORDS = {"up": "down", "more": "less", "high": "low", "rise": "fall", "gain": "loss"}
UP_WORDS = ("rose", "grew", "climbed", "jumped", "soared")
H = ("randomized trial", "cohort", "case control", "meta analysis", "review")
"""
    assert [line for line, _ in offences(ast.parse(source))] == list(range(3, 12))
    quiet = """
import re
FIELDS = ("text", "dimension", "priority", "budget", "enabled")
list_display = ["claim", "verifier", "family", "verdict", "valid"]
X = re.compile(r"[a|b|c|d|e]+")
Y = re.compile(r"(?:doi|arxiv)")
"""
    assert offences(ast.parse(quiet)) == []


def test_cue_patterns_and_word_lists_live_in_the_language_package():
    assert offending_modules() == []
