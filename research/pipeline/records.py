"""Typed records of a research plan: the schema every planner's output must satisfy.

A plan version's JSON (``PlanVersion.content``) is a dumped :class:`PlanContent`. The
offline planner, the LLM planner and the browser editor all go through
:func:`parse_plan`, so a plan that reaches the database always has the same shape,
and :func:`plan_problems` / :func:`run_blockers` say in words what is wrong with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

QUERY_CLASSES = (
    "definition",
    "mechanism",
    "provenance",
    "benchmark",
    "implementation",
    "limitation",
    "comparison",
    "counter-evidence",
    "temporal",
    "source-specific",
)
# What a query may be sent to: the plan's own library, scholarly indexes, the web.
SOURCE_CLASSES = (
    "library",
    "paper",
    "preprint",
    "encyclopedia",
    "documentation",
    "news",
    "web",
)
DEFAULT_SOURCE_CLASSES = ["library", "paper", "preprint", "encyclopedia", "web"]
MAX_QUESTION_CHARS = 2000
MAX_TEXT_CHARS = 1000
MAX_QUERY_CHARS = 400
MAX_SUBQUESTIONS = 30
MAX_QUERIES_PER_SUBQUESTION = 20
KEY_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,39}$"


class PlanSchemaError(ValueError):
    """A plan that does not fit the schema; ``messages`` say why, in words."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


class Budgets(BaseModel):
    """Limits for one run of the plan; the run records which one stopped it."""

    model_config = ConfigDict(extra="ignore")

    queries: int = Field(
        default=40, ge=1, le=2000, description="Search queries, follow-ups included."
    )
    documents: int = Field(default=200, ge=1, le=100_000, description="Sources a run may draw on.")
    wall_time_s: int = Field(
        default=1800, ge=1, le=7 * 24 * 3600, description="Wall-clock seconds."
    )
    rounds: int = Field(
        default=1, ge=0, le=5, description="Best-first follow-up rounds after round 0."
    )
    hits_per_query: int = Field(default=10, ge=1, le=100, description="Results kept per query.")
    # 15 by default (docs/benchmarks.md, "Mining reads the passages beside the retrieved
    # ones"): with the neighbouring passages mined, 15 claims raise the mining benchmark's
    # top-10 rationale recall to 0.81 and a reader keeps a larger share than of 25 before; 25
    # found one or two more of the libraries' gold findings, ranked 16th-25th. A plan may
    # ask for 1 to 500.
    claims: int = Field(
        default=15,
        ge=1,
        le=500,
        description="Claims a run keeps for review: the most relevant findings.",
    )


class QuerySpec(BaseModel):
    model_config = ConfigDict(extra="ignore")

    key: str = Field(pattern=KEY_PATTERN, description="Stable across versions of one plan.")
    text: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    query_class: str
    priority: int = Field(default=0, ge=0, le=10)
    enabled: bool = True
    source_classes: list[str] = Field(default_factory=list)

    @field_validator("text")
    @classmethod
    def _strip_text(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("query_class")
    @classmethod
    def _known_class(cls, value: str) -> str:
        if value not in QUERY_CLASSES:
            raise ValueError(f"unknown query class {value!r}")
        return value

    @field_validator("source_classes")
    @classmethod
    def _known_sources(cls, value: list[str]) -> list[str]:
        unknown = [v for v in value if v not in SOURCE_CLASSES]
        if unknown:
            raise ValueError(f"unknown source class {unknown[0]!r}")
        return list(dict.fromkeys(value))


class SubquestionSpec(BaseModel):
    model_config = ConfigDict(extra="ignore")

    key: str = Field(pattern=KEY_PATTERN)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    dimension: str = Field(default="", max_length=60)
    priority: int = Field(default=0, ge=0, le=10)
    enabled: bool = True
    budget: int = Field(
        default=6, ge=1, le=500, description="Most queries for this node, follow-ups too."
    )
    queries: list[QuerySpec] = Field(default_factory=list, max_length=MAX_QUERIES_PER_SUBQUESTION)

    @field_validator("text")
    @classmethod
    def _strip_text(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("must not be empty")
        return value


class PlanContent(BaseModel):
    """The research graph of one plan version."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = 1
    kind: Literal["research", "audit"] = Field(
        default="research",
        description="research: search for the question; audit: verify an imported report.",
    )
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    planner: str = Field(default="", description="Which planner proposed the first version.")
    planner_message: str = Field(default="", description="Why a fallback happened, in words.")
    source_classes: list[str] = Field(default_factory=lambda: list(DEFAULT_SOURCE_CLASSES))
    budgets: Budgets = Field(default_factory=lambda: Budgets())
    subquestions: list[SubquestionSpec] = Field(min_length=1, max_length=MAX_SUBQUESTIONS)

    @field_validator("question")
    @classmethod
    def _strip_question(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be empty")
        return value

    def enabled_queries(self) -> list[tuple[SubquestionSpec, QuerySpec]]:
        return [(sq, q) for sq in self.subquestions if sq.enabled for q in sq.queries if q.enabled]

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def normalize_query(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _describe(error: dict[str, Any]) -> str:
    loc = ".".join(str(part) for part in error["loc"])
    return f"{loc}: {error['msg']}"


def question_problems(question: str) -> list[str]:
    """What is wrong with a research question, in words (empty list: nothing)."""
    stripped = question.strip()
    if not stripped:
        return ["The question is empty: type the question you want researched."]
    if len(stripped) > MAX_QUESTION_CHARS:
        return [
            f"The question is {len(stripped):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,}. Put background material in the scope instead."
        ]
    if not re.search(r"\w{2,}", stripped):
        return ["The question has no words to search for."]
    return []


def parse_plan(content: dict[str, Any]) -> PlanContent:
    """Validate raw plan JSON against the schema; raise PlanSchemaError in words."""
    try:
        plan = PlanContent.model_validate(content)
    except ValidationError as exc:
        raise PlanSchemaError([_describe(e) for e in exc.errors()]) from exc  # type: ignore[arg-type]
    problems = plan_problems(plan)
    if problems:
        raise PlanSchemaError(problems)
    return plan


def plan_problems(plan: PlanContent) -> list[str]:
    """Semantic problems that make a plan unsavable: duplicate keys or queries."""
    problems = question_problems(plan.question)
    seen_keys: set[str] = set()
    seen_queries: dict[str, str] = {}
    for sq in plan.subquestions:
        if sq.key in seen_keys:
            problems.append(f"Two subquestions share the key {sq.key!r}.")
        seen_keys.add(sq.key)
        for q in sq.queries:
            if q.key in seen_keys:
                problems.append(f"The key {q.key!r} is used twice.")
            seen_keys.add(q.key)
            norm = normalize_query(q.text)
            if norm in seen_queries:
                problems.append(
                    f"Duplicate query: {q.text!r} is the same as query {seen_queries[norm]!r}."
                )
            else:
                seen_queries[norm] = q.key
    return problems


def run_blockers(plan: PlanContent) -> list[str]:
    """Why a run of this plan must not start (empty list: it may)."""
    problems = plan_problems(plan)
    if plan.kind == "audit":  # its report's citations are what it reads; queries optional
        return problems
    if not any(sq.enabled for sq in plan.subquestions):
        problems.append("Every subquestion is disabled: enable at least one to start a run.")
    elif not plan.enabled_queries():
        problems.append(
            "Every query is disabled: enable at least one query of an enabled subquestion "
            "to start a run."
        )
    else:
        problems += [
            f"Subquestion {sq.key} has no enabled query, so nothing would be searched for it: "
            "add a query, enable one, or disable the subquestion."
            for sq in plan.subquestions
            if sq.enabled and not any(q.enabled for q in sq.queries)
        ]
    return problems


# --- editing: pure operations on a plan, validated by the caller ---------------------


class PlanEditError(ValueError):
    """An edit that cannot apply (unknown key, a move past the end)."""


def _all_keys(plan: PlanContent) -> set[str]:
    return {sq.key for sq in plan.subquestions} | {
        q.key for sq in plan.subquestions for q in sq.queries
    }


def next_key(prefix: str, taken: set[str]) -> str:
    n = 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def find_subquestion(plan: PlanContent, key: str) -> SubquestionSpec:
    for sq in plan.subquestions:
        if sq.key == key:
            return sq
    raise PlanEditError(f"There is no subquestion {key!r} in this version.")


def find_query(plan: PlanContent, key: str) -> tuple[SubquestionSpec, QuerySpec]:
    for sq in plan.subquestions:
        for q in sq.queries:
            if q.key == key:
                return sq, q
    raise PlanEditError(f"There is no query {key!r} in this version.")


def _move(items: list[Any], index: int, delta: int) -> None:
    target = index + delta
    if not 0 <= target < len(items):
        raise PlanEditError("It is already at the edge; it cannot move further.")
    items[index], items[target] = items[target], items[index]


def add_subquestion(plan: PlanContent, **fields: Any) -> str:
    key = next_key("s", _all_keys(plan))
    plan.subquestions.append(SubquestionSpec.model_construct(key=key, queries=[], **fields))
    return key


def update_subquestion(plan: PlanContent, key: str, **fields: Any) -> None:
    sq = find_subquestion(plan, key)
    for name, value in fields.items():
        setattr(sq, name, value)


def move_subquestion(plan: PlanContent, key: str, delta: int) -> None:
    sq = find_subquestion(plan, key)
    _move(plan.subquestions, plan.subquestions.index(sq), delta)


def delete_subquestion(plan: PlanContent, key: str) -> str:
    """Remove a subquestion and its queries; the last one cannot go (a plan needs one)."""
    sq = find_subquestion(plan, key)
    if len(plan.subquestions) == 1:
        raise PlanEditError("A plan needs at least one subquestion; this is the last one.")
    plan.subquestions.remove(sq)
    return sq.text


def delete_query(plan: PlanContent, key: str) -> str:
    sq, q = find_query(plan, key)
    sq.queries.remove(q)
    return q.text


def add_query(plan: PlanContent, subquestion_key: str, **fields: Any) -> str:
    sq = find_subquestion(plan, subquestion_key)
    key = next_key(f"{sq.key}q", _all_keys(plan))
    sq.queries.append(QuerySpec.model_construct(key=key, **fields))
    return key


def update_query(plan: PlanContent, key: str, **fields: Any) -> None:
    _, q = find_query(plan, key)
    for name, value in fields.items():
        setattr(q, name, value)


def move_query(plan: PlanContent, key: str, delta: int) -> None:
    sq, q = find_query(plan, key)
    _move(sq.queries, sq.queries.index(q), delta)


def edited(plan: PlanContent) -> PlanContent:
    """Re-validate a plan after edits (model_construct skips validation)."""
    return parse_plan(plan.model_dump(mode="json", warnings=False))


# --- diff between two versions -----------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One difference between two plan versions, in words."""

    kind: str  # added | removed | changed | moved
    what: str  # "subquestion s2", "query s2q1", "budgets", "plan"
    field: str = ""
    before: str = ""
    after: str = ""


SUBQUESTION_FIELDS = ("text", "dimension", "priority", "budget", "enabled")
QUERY_FIELDS = ("text", "query_class", "priority", "enabled", "source_classes")


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "(none)"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _field_changes(what: str, a: Any, b: Any, fields: tuple[str, ...]) -> list[Change]:
    return [
        Change("changed", what, name, _show(getattr(a, name)), _show(getattr(b, name)))
        for name in fields
        if getattr(a, name) != getattr(b, name)
    ]


def diff_plans(a: PlanContent, b: PlanContent) -> list[Change]:
    """What changed from version a to version b, keyed by the stable keys."""
    changes: list[Change] = []
    if a.question != b.question:
        changes.append(Change("changed", "plan", "question", a.question, b.question))
    if a.source_classes != b.source_classes:
        changes.append(
            Change(
                "changed",
                "plan",
                "source classes",
                _show(a.source_classes),
                _show(b.source_classes),
            )
        )
    changes += _field_changes("budgets", a.budgets, b.budgets, tuple(Budgets.model_fields))
    subs_a = {sq.key: (i, sq) for i, sq in enumerate(a.subquestions)}
    subs_b = {sq.key: (i, sq) for i, sq in enumerate(b.subquestions)}
    for key, (pos, sq) in subs_b.items():
        if key not in subs_a:
            changes.append(Change("added", f"subquestion {key}", after=sq.text))
            continue
        old_pos, old = subs_a[key]
        changes += _field_changes(f"subquestion {key}", old, sq, SUBQUESTION_FIELDS)
        if old_pos != pos:
            changes.append(
                Change("moved", f"subquestion {key}", "position", str(old_pos + 1), str(pos + 1))
            )
    changes += [
        Change("removed", f"subquestion {key}", before=sq.text)
        for key, (_, sq) in subs_a.items()
        if key not in subs_b
    ]
    changes += _diff_queries(a, b)
    return changes


def _query_index(plan: PlanContent) -> dict[str, tuple[str, int, QuerySpec]]:
    return {q.key: (sq.key, i, q) for sq in plan.subquestions for i, q in enumerate(sq.queries)}


def _diff_queries(a: PlanContent, b: PlanContent) -> list[Change]:
    changes: list[Change] = []
    qa, qb = _query_index(a), _query_index(b)
    for key, (sq_key, pos, q) in qb.items():
        what = f"query {key}"
        if key not in qa:
            changes.append(Change("added", what, after=f"[{q.query_class}] {q.text}"))
            continue
        old_sq, old_pos, old = qa[key]
        changes += _field_changes(what, old, q, QUERY_FIELDS)
        if (old_sq, old_pos) != (sq_key, pos):
            changes.append(
                Change(
                    "moved", what, "position", f"{old_sq} #{old_pos + 1}", f"{sq_key} #{pos + 1}"
                )
            )
    changes += [
        Change("removed", f"query {key}", before=f"[{q.query_class}] {q.text}")
        for key, (_, _, q) in qa.items()
        if key not in qb
    ]
    return changes
