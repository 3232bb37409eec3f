"""PDF by printing the standalone HTML export in headless Chromium (Playwright).

Chromium is already a dependency (browser tests drive it), prints exactly what the HTML
export shows, and needs no second layout engine; WeasyPrint would add Pango/cairo system
libraries for a second, slightly different rendering. See docs/reports.md.

One browser per process prints every export (``PRINTER``): starting Chromium for each
export cost ~8 processes and a second of CPU apiece (issue 27: six simultaneous exports
made 50 processes and slowed everyone's pages). At most ``PDF_MAX_CONCURRENT`` pages
print at once; an export waits at most ``PDF_QUEUE_WAIT_S`` for a turn, then is refused
(``PdfBusy``). Measured before/after: docs/bench/pdf_pool.md.
"""

from __future__ import annotations

import asyncio
import atexit
import math
import os
import re
import shutil
import threading
from collections.abc import Awaitable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager, suppress
from datetime import UTC, datetime

from django.conf import settings
from playwright.async_api import Browser, Playwright, Route, async_playwright
from playwright.async_api import Error as PlaywrightError

from research.providers.base import ProviderError

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PDF_TIMEOUT_S = 120
# An idle browser holds ~270 MB (PSS, measured): closed after this long without an export.
IDLE_CLOSE_S = 300.0
FOOTER = (
    '<div style="font: 7pt sans-serif; color: #5b6573; width: 100%; text-align: center;">'
    'page <span class="pageNumber"></span> of <span class="totalPages"></span></div>'
)
MISSING = (
    "PDF export needs Chromium, and there is none at {path}: install Debian's chromium "
    "package (sudo apt-get install chromium) or set CHROMIUM_PATH"
)


class PdfError(ProviderError):
    def __str__(self) -> str:  # shown to people as it is: one line, no retry tag
        return str(self.args[0])


class PdfBusy(PdfError):
    """Every printing slot stayed taken for the whole wait; nothing was printed."""

    def __init__(self, message: str, *, retry_after_s: int) -> None:
        super().__init__(message, permanent=False, provider="pdf")
        self.retry_after_s = retry_after_s


def chromium_path() -> str:
    return str(getattr(settings, "CHROMIUM_PATH", "") or "/usr/bin/chromium")


def find_chromium() -> str:
    """The Chromium binary to print with; a missing one is a one-line error naming the package."""
    path = chromium_path()
    found = shutil.which(path)
    if found is None:
        raise PdfError(MISSING.format(path=path), permanent=True, provider="pdf")
    return found


# Skia writes the print time as the PDF's creation and modification date.
_PDF_DATE = re.compile(rb"(/(?:CreationDate|ModDate) \()(D:\d{14}[^)]*)(\))")


def render_pdf(html: str, *, dated: datetime) -> bytes:
    """Print ``html`` to A4 PDF bytes dated ``dated`` (the same input, the same bytes).

    1. Find Chromium (``PdfError`` naming the package when it is missing).
    2. Wait for one of ``PDF_MAX_CONCURRENT`` printing slots, at most ``PDF_QUEUE_WAIT_S``
       (``PdfBusy`` after that).
    3. Print on this process's one browser, then replace the print time by ``dated``.
    """
    executable = find_chromium()
    limit, wait_s = settings.PDF_MAX_CONCURRENT, settings.PDF_QUEUE_WAIT_S
    data = PRINTER.print(html, executable, limit=limit, wait_s=wait_s)
    return fix_dates(data, dated)


def fix_dates(data: bytes, dated: datetime) -> bytes:
    """Replace Chromium's print time by ``dated`` (same length, so offsets stay valid)."""
    stamp = dated.astimezone(UTC).strftime("D:%Y%m%d%H%M%S+00'00'").encode()

    def replace(m: re.Match[bytes]) -> bytes:
        if len(m.group(2)) != len(stamp):
            return m.group(0)
        return m.group(1) + stamp + m.group(3)

    return _PDF_DATE.sub(replace, data)


class Slots:
    """At most ``limit`` holders at once; the others wait their turn, at most ``wait_s``."""

    def __init__(self) -> None:
        self._free = threading.Condition()
        self.busy = 0

    @contextmanager
    def hold(self, limit: int, wait_s: float) -> Iterator[None]:
        with self._free:
            if not self._free.wait_for(lambda: self.busy < limit, timeout=wait_s):
                raise PdfBusy(
                    f"PDF export is busy: other exports kept the printer full for {wait_s:g} s; "
                    "try again in a minute",
                    retry_after_s=max(5, math.ceil(wait_s)),
                )
            self.busy += 1
        try:
            yield
        finally:
            with self._free:
                self.busy -= 1
                self._free.notify()


class Printer:
    """One headless Chromium for this process, driven by an event loop on a thread of its own.

    Playwright objects belong to the loop that made them (and its sync API refuses to run
    inside daphne's or uvicorn's loop), so every browser call runs on that loop and callers
    wait on a future. Each export gets a fresh browser context (no cookies, cache or
    storage shared between exports), closed after printing. A browser that crashed or
    disconnected is launched again, and an export it died under is printed once more; the
    browser is closed after ``IDLE_CLOSE_S`` without an export, and at process exit.
    """

    def __init__(self) -> None:
        self.slots = Slots()
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self._launch = asyncio.Lock()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._executable = ""
        self._printing = 0
        self._last_print = 0.0
        self._tasks: set[asyncio.Task[None]] = set()

    def print(self, html: str, executable: str, *, limit: int, wait_s: float) -> bytes:
        with self.slots.hold(limit, wait_s):
            job = asyncio.run_coroutine_threadsafe(self._print(html, executable), self._running())
            try:
                return job.result(timeout=PDF_TIMEOUT_S)
            except FutureTimeout as exc:
                job.cancel()
                message = f"Chromium did not print within {PDF_TIMEOUT_S} s"
                raise PdfError(message, permanent=False, provider="pdf") from exc

    def close(self) -> None:
        """Close the browser and stop the loop (at exit); the next export starts them again."""
        with self._guard:
            loop, self._loop = self._loop, None
        if loop is None or self._pid != os.getpid():
            return
        with suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shut(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None or self._pid != os.getpid():  # first use, or a forked child
                self._loop, self._pid = asyncio.new_event_loop(), os.getpid()
                self._launch, self._playwright, self._browser = asyncio.Lock(), None, None
                threading.Thread(
                    target=_run_forever, args=(self._loop,), name="pdf-printer", daemon=True
                ).start()
            return self._loop

    async def _print(self, html: str, executable: str) -> bytes:
        self._printing += 1
        try:
            return await self._print_retrying(html, executable)
        finally:
            self._printing -= 1
            loop = asyncio.get_running_loop()
            self._last_print = loop.time()
            loop.call_later(IDLE_CLOSE_S, self._check_idle)

    def _check_idle(self) -> None:
        task = asyncio.get_running_loop().create_task(self._close_if_idle())
        self._tasks.add(task)  # held until done: the loop keeps only weak references
        task.add_done_callback(self._tasks.discard)

    async def _close_if_idle(self) -> None:
        async with self._launch:
            idle_s = asyncio.get_running_loop().time() - self._last_print
            if self._printing == 0 and idle_s >= IDLE_CLOSE_S * 0.99:
                await self._shut()

    async def _print_retrying(self, html: str, executable: str) -> bytes:
        browser = await self._browser_for(executable)
        try:
            return await _print_page(browser, html)
        except PlaywrightError as exc:
            if browser.is_connected():
                raise _failed(exc) from exc
        # The browser died under this export (crashed, killed): once more on a new one.
        browser = await self._browser_for(executable)
        try:
            return await _print_page(browser, html)
        except PlaywrightError as exc:
            raise _failed(exc) from exc

    async def _browser_for(self, executable: str) -> Browser:
        async with self._launch:
            browser = self._browser
            if browser and browser.is_connected() and self._executable == executable:
                return browser
            if browser is not None:
                await _quietly(browser.close())
            try:
                if self._playwright is None:
                    self._playwright = await async_playwright().start()
                self._browser = await self._playwright.chromium.launch(
                    executable_path=executable, args=CHROMIUM_ARGS
                )
            except PlaywrightError as exc:
                raise _failed(exc) from exc
            self._executable = executable
            return self._browser

    async def _shut(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        if browser is not None:
            await _quietly(browser.close())
        if playwright is not None:
            with suppress(Exception):
                await playwright.stop()


async def _print_page(browser: Browser, html: str) -> bytes:
    context = await browser.new_context(java_script_enabled=False)
    try:
        page = await context.new_page()
        await page.route("**/*", _abort)  # nothing leaves the page
        await page.set_content(html, wait_until="load")
        # The stylesheet's @page rules set the size (A4; appendix tables on landscape
        # pages) and margins; the footer numbers the pages.
        return await page.pdf(
            format="A4",
            print_background=True,
            prefer_css_page_size=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
        )
    finally:
        await _quietly(context.close())


async def _abort(route: Route) -> None:
    await route.abort()


async def _quietly(closing: Awaitable[None]) -> None:
    with suppress(PlaywrightError):
        await closing


def _failed(exc: PlaywrightError) -> PdfError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return PdfError(f"Chromium could not print: {first}", permanent=True, provider="pdf")


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


PRINTER = Printer()
atexit.register(PRINTER.close)
