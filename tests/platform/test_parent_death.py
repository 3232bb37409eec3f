"""``config.serve.die_with_parent``: a child ends with its parent (Linux ``PR_SET_PDEATHSIG``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.processes import BASE_DIR, alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

# A parent that forks a child; the child asks to die with it, says its pid, and sleeps.
PARENT = """
import os, sys, time
from config.serve import die_with_parent
parent = os.getpid()
if os.fork() == 0:
    die_with_parent(parent)
    print(os.getpid(), flush=True)
    time.sleep(120)
    os._exit(0)
time.sleep(120)
"""


def test_it_ends_a_child_when_its_parent_is_killed():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], cwd=BASE_DIR, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        assert alive(child)
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def test_it_exits_at_once_when_the_parent_is_already_gone():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])  # stands for a parent that died
    gone.wait(timeout=60)
    code = f"from config.serve import die_with_parent; die_with_parent({gone.pid})"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1  # its parent is not (any more) the one it names
    assert f"parent process {gone.pid} is gone" in result.stderr
