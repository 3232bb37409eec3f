"""The default browser page; a test module needing other options defines its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.support import chromium_page


@pytest.fixture
def browser_page() -> Iterator[object]:
    with chromium_page() as page:
        yield page
