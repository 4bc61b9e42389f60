"""Real-browser fixtures: Debian's Chromium, headless, with our extension and host installed.

These tests need /usr/lib/chromium/chromium (or CHROME_BIN). `.ci/run` installs it; when it is
missing the tests fail with the launcher's hint rather than skip, so CI can never pass without
having driven a real browser.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tabwarden.browser import ThrowawayBrowser
from tabwarden.demo import serve_page


@pytest.fixture
def page_url() -> Iterator[str]:
    with serve_page() as url:
        yield url


@pytest.fixture
def browser() -> Iterator[ThrowawayBrowser]:
    b = ThrowawayBrowser()
    b.install_host()
    try:
        yield b
    finally:
        b.close()
