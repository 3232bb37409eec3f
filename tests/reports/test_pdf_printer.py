"""The PDF printer: one long-lived Chromium per process, a bounded number of pages, a
queue with a wait bound, relaunch after a crash, closed at exit; a missing browser is
one line naming the package (issues 26 and 27)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reports.exports import pdf
from reports.exports.pdf import render_pdf

HTML = "<!doctype html><h1>Printer</h1>" + "<p>One browser prints every export.</p>" * 200
DAY = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
BROWSERS = {b"chromium", b"chrome", b"headless_shell", b"chrome-headless-shell"}


def browser_pids(root: int | None = None) -> set[int]:
    """Chromium browser processes (not its renderers and helpers) under ``root``."""
    root = root or os.getpid()
    parents, browsers = {}, set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat[stat.rindex(")") + 2 :].split()[1])
        if argv[0].rsplit(b"/", 1)[-1] in BROWSERS and not any(b"--type=" in a for a in argv):
            browsers.add(pid)
    return {pid for pid in browsers if _under(pid, root, parents)}


def _under(pid: int, root: int, parents: dict[int, int]) -> bool:
    while pid > 1:
        pid = parents.get(pid, 1)
        if pid == root:
            return True
    return False


@contextmanager
def sampled(seen: set[int]):
    """Every browser process that lived under this process while the block ran."""
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            seen.update(browser_pids())
            time.sleep(0.02)

    thread = threading.Thread(target=sample)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def wait_until(predicate, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def fresh_printer():
    pdf.PRINTER.close()
    yield pdf.PRINTER
    pdf.PRINTER.close()


def test_it_prints_every_export_on_one_long_lived_browser():
    first = render_pdf(HTML, dated=DAY)
    browsers = browser_pids()
    assert len(browsers) == 1, "no browser stays up between exports"
    seen: set[int] = set()
    with sampled(seen), ThreadPoolExecutor(max_workers=6) as pool:
        printed = list(pool.map(lambda _: render_pdf(HTML, dated=DAY), range(6)))
    assert seen == browsers, "an export launched a browser of its own"
    assert browser_pids() == browsers
    assert set(printed) == {first}  # byte-reproducible on a reused browser too


def test_it_prints_at_most_the_configured_pages_at_once(settings, fresh_printer):
    settings.PDF_MAX_CONCURRENT = 2
    busiest = [0]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            busiest[0] = max(busiest[0], fresh_printer.slots.busy)
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    with ThreadPoolExecutor(max_workers=5) as pool:
        printed = list(pool.map(lambda _: render_pdf(HTML, dated=DAY), range(5)))
    stop.set()
    watcher.join()
    assert busiest[0] == 2
    assert len(set(printed)) == 1


def test_it_queues_an_export_until_a_page_is_free(settings):
    settings.PDF_MAX_CONCURRENT, settings.PDF_QUEUE_WAIT_S = 1, 30
    taken, release = threading.Event(), threading.Event()

    def print_elsewhere() -> None:
        with pdf.PRINTER.slots.hold(1, 0):
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=print_elsewhere)
    holder.start()
    taken.wait(5)
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    assert render_pdf(HTML, dated=DAY).startswith(b"%PDF-")
    assert time.monotonic() - started >= 0.5
    holder.join()


def test_it_refuses_an_export_that_waited_past_the_bound(settings):
    settings.PDF_MAX_CONCURRENT, settings.PDF_QUEUE_WAIT_S = 1, 0.3
    with pdf.PRINTER.slots.hold(1, 0):  # the one page is printing and stays so
        started = time.monotonic()
        with pytest.raises(pdf.PdfBusy) as busy:
            render_pdf(HTML, dated=DAY)
        waited = time.monotonic() - started
    assert 0.3 <= waited < 5
    assert str(busy.value) == (
        "PDF export is busy: other exports kept the printer full for 0.3 s; try again in a minute"
    )
    assert busy.value.retry_after_s == 5
    assert pdf.PRINTER.slots.busy == 0


def test_it_launches_the_browser_again_after_it_crashed():
    first = render_pdf(HTML, dated=DAY)
    (crashed,) = browser_pids()
    os.kill(crashed, signal.SIGKILL)
    wait_until(lambda: crashed not in browser_pids())
    assert render_pdf(HTML, dated=DAY) == first
    (relaunched,) = browser_pids()
    assert relaunched != crashed


def test_it_closes_the_browser_and_starts_it_again_on_the_next_export(fresh_printer):
    render_pdf(HTML, dated=DAY)
    assert len(browser_pids()) == 1
    fresh_printer.close()
    wait_until(lambda: not browser_pids())
    render_pdf(HTML, dated=DAY)
    assert len(browser_pids()) == 1


def test_it_closes_a_browser_left_idle(monkeypatch, fresh_printer):
    monkeypatch.setattr(pdf, "IDLE_CLOSE_S", 1.0)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda _: render_pdf(HTML, dated=DAY), range(2)))
    assert len(browser_pids()) == 1
    wait_until(lambda: not browser_pids(), 10)
    assert render_pdf(HTML, dated=DAY).startswith(b"%PDF-")  # and starts it again


def test_it_leaves_no_browser_behind_when_the_process_exits():
    script = (
        "import django, os; django.setup()\n"
        "from datetime import UTC, datetime\n"
        "from reports.exports.pdf import render_pdf\n"
        "render_pdf('<p>exit</p>', dated=datetime(2026, 1, 1, tzinfo=UTC))\n"
        "print(os.getpid(), flush=True)\n"
        "input()\n"  # exits when the test closes its stdin
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    assert child.stdin is not None and child.stdout is not None
    browsers = browser_pids(int(child.stdout.readline()))
    assert len(browsers) == 1
    child.stdin.write(b"\n")
    child.stdin.close()
    assert child.wait(timeout=60) == 0
    wait_until(lambda: not any(Path(f"/proc/{b}").exists() for b in browsers), 10)


def test_it_names_the_package_in_one_line_when_chromium_is_missing(settings, tmp_path):
    settings.CHROMIUM_PATH = str(tmp_path / "chromium")
    with pytest.raises(pdf.PdfError) as missing:
        render_pdf(HTML, dated=DAY)
    assert str(missing.value) == (
        f"PDF export needs Chromium, and there is none at {tmp_path / 'chromium'}: install "
        "Debian's chromium package (sudo apt-get install chromium) or set CHROMIUM_PATH"
    )
    assert missing.value.permanent
