"""PDF by printing the standalone HTML export in headless Chromium (Playwright).

Chromium is already a dependency (browser tests drive it), prints exactly what the HTML
export shows, and needs no second layout engine; WeasyPrint would add Pango/cairo system
libraries for a second, slightly different rendering. See docs/reports.md.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from django.conf import settings
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

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
FOOTER = (
    '<div style="font: 7pt sans-serif; color: #5b6573; width: 100%; text-align: center;">'
    'page <span class="pageNumber"></span> of <span class="totalPages"></span></div>'
)


class PdfError(ProviderError):
    pass


def chromium_path() -> str:
    return str(getattr(settings, "CHROMIUM_PATH", "") or "/usr/bin/chromium")


# Skia writes the print time as the PDF's creation and modification date.
_PDF_DATE = re.compile(rb"(/(?:CreationDate|ModDate) \()(D:\d{14}[^)]*)(\))")


def render_pdf(html: str, *, dated: datetime) -> bytes:
    """Print ``html`` to A4 PDF bytes dated ``dated`` (the same input, the same bytes).

    Playwright's sync API refuses to run inside an asyncio loop (daphne, channels), so
    printing always happens on a worker thread of its own.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        data = pool.submit(_print, html, chromium_path()).result(timeout=PDF_TIMEOUT_S)
    return fix_dates(data, dated)


def fix_dates(data: bytes, dated: datetime) -> bytes:
    """Replace Chromium's print time by ``dated`` (same length, so offsets stay valid)."""
    stamp = dated.astimezone(UTC).strftime("D:%Y%m%d%H%M%S+00'00'").encode()

    def replace(m: re.Match[bytes]) -> bytes:
        if len(m.group(2)) != len(stamp):
            return m.group(0)
        return m.group(1) + stamp + m.group(3)

    return _PDF_DATE.sub(replace, data)


def _print(html: str, executable: str) -> bytes:
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(java_script_enabled=False)
                page.route("**/*", lambda route: route.abort())  # nothing leaves the page
                page.set_content(html, wait_until="load")
                # The stylesheet's @page rules set the size (A4; appendix tables on
                # landscape pages) and margins; the footer numbers the pages.
                return page.pdf(
                    format="A4",
                    print_background=True,
                    prefer_css_page_size=True,
                    display_header_footer=True,
                    header_template="<span></span>",
                    footer_template=FOOTER,
                )
            finally:
                browser.close()
    except PlaywrightError as exc:
        raise PdfError(f"Chromium could not print: {exc}", permanent=True, provider="pdf") from exc
