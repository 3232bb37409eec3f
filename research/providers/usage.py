"""What a stage spent: seconds (wall and CPU) and model use per model family.

The runner opens a :class:`Recorder` around each step of a stage (:func:`recording`) and
adds what it measured to the stage checkpoint's counters under ``cost`` (a :class:`Cost`,
summed over every attempt of the stage, a failed or retried one included). The model
providers report into whichever recorder is current, through a context variable, so
nothing is threaded through the pipeline's signatures:

- ``llm``: ``LLMClient.chat`` calls, their seconds, and the prompt and completion tokens
  of the server's ``usage`` (when it sends one);
- ``encoder``: ``Embedder.encode`` calls, with the texts encoded as *items*;
- ``reranker``: ``Reranker.score`` calls, with the (query, passage) pairs as items;
- ``verifier:<family>``: one call per claim a verifier family judged, its admitted
  passages as items. Its seconds include the models it calls: an LLM judge's requests
  are counted under ``llm`` as well, a learned family's encodings under ``encoder``.

Items are texts or pairs, not tokenizer tokens. With no recorder current (a benchmark, a
shell), :func:`measure` only runs its block. Recording never raises: a stage computes the
same with or without it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

LLM = "llm"


def _int(data: dict[str, Any], key: str) -> int:
    value = data.get(key, 0)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _float(data: dict[str, Any], key: str) -> float:
    value = data.get(key, 0.0)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


@dataclass(frozen=True)
class FamilyUse:
    """One model family's calls within a stage (or a run)."""

    calls: int = 0
    seconds: float = 0.0
    items: int = 0  # texts or pairs encoded (encoders, rerankers, verifier passages)
    prompt_tokens: int = 0  # LLM: as the server's usage reported them
    completion_tokens: int = 0

    def plus(self, other: FamilyUse) -> FamilyUse:
        return FamilyUse(
            self.calls + other.calls,
            self.seconds + other.seconds,
            self.items + other.items,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    @property
    def tokens_reported(self) -> bool:
        return bool(self.prompt_tokens or self.completion_tokens)

    def to_json(self) -> dict[str, int | float]:
        data: dict[str, int | float] = {"calls": self.calls, "seconds": round(self.seconds, 3)}
        for key in ("items", "prompt_tokens", "completion_tokens"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data

    @classmethod
    def from_json(cls, data: Any) -> FamilyUse:
        if not isinstance(data, dict):
            return cls()
        return cls(
            _int(data, "calls"),
            _float(data, "seconds"),
            _int(data, "items"),
            _int(data, "prompt_tokens"),
            _int(data, "completion_tokens"),
        )

    def words(self, *, tokens: bool = False) -> str:
        """In words: "3 calls, 1,204 tokens in, 96 out, 2.1 s" or "2 calls, 50 items, 0.3 s".

        ``tokens``: the family is one whose tokens are counted (an LLM), so a server
        that sent no usage is said to have sent none.
        """
        parts = [f"{self.calls:,} call{'' if self.calls == 1 else 's'}"]
        if self.tokens_reported:
            parts.append(f"{self.prompt_tokens:,} tokens in, {self.completion_tokens:,} out")
        elif tokens:
            parts.append("tokens not reported by the server")
        if self.items:
            parts.append(f"{self.items:,} items")
        parts.append(f"{self.seconds:.1f} s")
        return ", ".join(parts)


@dataclass(frozen=True)
class Cost:
    """Seconds a stage (or a run) worked, CPU seconds of its process, and model use."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    families: dict[str, FamilyUse] = field(default_factory=dict)

    @property
    def recorded(self) -> bool:
        return bool(self.wall_s or self.cpu_s or self.families)

    @property
    def llm(self) -> FamilyUse:
        return self.families.get(LLM, FamilyUse())

    def plus(self, other: Cost) -> Cost:
        families = dict(self.families)
        for name, use in other.families.items():
            families[name] = families.get(name, FamilyUse()).plus(use)
        return Cost(self.wall_s + other.wall_s, self.cpu_s + other.cpu_s, families)

    def rows(self) -> list[tuple[str, FamilyUse]]:
        """The families, by name."""
        return sorted(self.families.items())

    def seconds_words(self) -> str:
        return f"{self.wall_s:.1f} s of work (CPU {self.cpu_s:.1f} s)"

    def family_words(self) -> list[str]:
        """One "name: calls, tokens or items, seconds" per family, by name."""
        return [f"{name}: {use.words(tokens=name == LLM)}" for name, use in self.rows()]

    def family_brackets(self) -> str:
        """Every family by name, its words in brackets: "encoder (2 calls, …), llm (…)"."""
        return ", ".join(f"{name} ({use.words(tokens=name == LLM)})" for name, use in self.rows())

    def llm_words(self) -> str:
        """The LLM's calls, tokens in and out, and seconds; or "no calls"."""
        return self.llm.words(tokens=True) if self.llm.calls else "no calls"

    def calls_words(self) -> str:
        """Calls per family, by name ("encoder 40, llm 12"), or "none"."""
        return ", ".join(f"{name} {use.calls:,}" for name, use in self.rows()) or "none"

    def to_json(self) -> dict[str, Any]:
        return {
            "wall_s": round(self.wall_s, 3),
            "cpu_s": round(self.cpu_s, 3),
            "families": {name: use.to_json() for name, use in self.rows()},
        }

    @classmethod
    def from_json(cls, data: Any) -> Cost:
        """The stored figures; anything missing or malformed reads as nothing spent."""
        if not isinstance(data, dict):
            return cls()
        families = data.get("families")
        return cls(
            _float(data, "wall_s"),
            _float(data, "cpu_s"),
            {
                str(name): FamilyUse.from_json(use)
                for name, use in (families.items() if isinstance(families, dict) else [])
            },
        )


def total(costs: Iterable[Cost]) -> Cost:
    result = Cost()
    for cost in costs:
        result = result.plus(cost)
    return result


class Recorder:
    """Collects one step's model use; :meth:`spent` adds its wall and CPU seconds.

    Thread-safe: a stage may encode on a helper thread that runs in a copy of its context.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._families: dict[str, FamilyUse] = {}
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def add(self, family: str, use: FamilyUse) -> None:
        with self._lock:
            self._families[family] = self._families.get(family, FamilyUse()).plus(use)

    def spent(self) -> Cost:
        """Everything recorded so far, with the seconds since the recorder opened."""
        with self._lock:
            families = dict(self._families)
        wall = time.perf_counter() - self._wall
        cpu = time.process_time() - self._cpu
        return Cost(max(wall, 0.0), max(cpu, 0.0), families)


_current: ContextVar[Recorder | None] = ContextVar("usage_recorder", default=None)


@contextmanager
def recording() -> Iterator[Recorder]:
    """Make a new recorder current for the block (the runner: one per step)."""
    recorder = Recorder()
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)


@dataclass
class Call:
    """One model call being measured; the provider sets its items and tokens."""

    items: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def tokens(self, prompt: int | None, completion: int | None) -> None:
        """Add the tokens a server's usage reported (None: not reported)."""
        self.prompt_tokens += prompt or 0
        self.completion_tokens += completion or 0


@contextmanager
def measure(family: str, *, items: int = 0) -> Iterator[Call]:
    """Time one call of ``family`` into the current recorder, also when the call raises."""
    call = Call(items)
    recorder = _current.get()
    if recorder is None:
        yield call
        return
    start = time.perf_counter()
    try:
        yield call
    finally:
        seconds = time.perf_counter() - start
        recorder.add(
            family, FamilyUse(1, seconds, call.items, call.prompt_tokens, call.completion_tokens)
        )
