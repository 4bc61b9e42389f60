"""Chromium started with its own command line, as a person's is, and watched over CDP: for tests
that must not use Playwright's launch (its defaults emulate focus in every page, and it hides
Chrome's output, where the host's log goes). Headful on a private X display with a window
manager where a desktop's behaviour is what is tested (focus, minimising, occlusion), else
headless like every other browser test.

``window_manager`` is a fixture (tests/browser/conftest.py imports it); ``own_launch`` replaces
the conftest's ``context`` in a module that needs it; ``extension_worker`` finds the extension's
service worker in such a context."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import BrowserContext, Worker

from tabwarden.cli.browser import ThrowawayBrowser, launch_flags
from tabwarden.manifests import EXTENSION_ID
from tests.browser.harness import playwright_driver
from tests.deadline import until, until_sync


@pytest.fixture
def window_manager(x_display: str) -> Iterator[str]:
    """openbox on ``x_display``: it minimises, raises and focuses windows as a desktop does."""
    openbox = shutil.which("openbox")
    if openbox is None:
        pytest.fail("openbox is missing: apt-get install -y openbox (scripts/setup does)")
    wm = subprocess.Popen(  # noqa: S603 - openbox from PATH, our own arguments
        [openbox, "--sm-disable"],
        env=dict(os.environ, DISPLAY=x_display),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield x_display
    finally:
        wm.terminate()
        try:
            wm.wait(5)
        except subprocess.TimeoutExpired:
            wm.kill()
            wm.wait()


def own_argv(browser: ThrowawayBrowser, url: str, *, headful: bool) -> list[str]:
    """``browser``'s own command line (``launch_flags``, headless or headful), plus a DevTools
    port for the test to watch it."""
    flags = launch_flags(browser.profile, browser.extension, headless=not headful)
    return [browser.chrome, *flags, "--remote-debugging-port=0", url]


@asynccontextmanager
async def own_launch(
    browser: ThrowawayBrowser, display: str | None = None
) -> AsyncIterator[BrowserContext]:
    """``browser`` started with its own command line (headful on ``display`` when given), its
    output (the host's log with it) in ``browser.log_path``, connected over CDP once the
    extension's worker runs; ``browser.close()`` ends it."""
    env = dict(browser.env) if display is None else dict(browser.env, DISPLAY=display)
    with open(browser.log_path, "ab") as log:
        browser.process = subprocess.Popen(  # noqa: S603 - the throwaway browser's own argv
            own_argv(browser, "about:blank", headful=display is not None),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # browser.close() takes the whole group
        )
    port_file = browser.profile / "DevToolsActivePort"
    port = until_sync(
        "Chromium wrote its DevTools port",
        lambda: port_file.exists() and port_file.read_text().split("\n", 1)[0].strip(),
    )
    # Connecting while the extension was still starting hung Playwright's connect now and then
    # (2 of ~10 runs), never after this.
    until_sync("the extension's worker runs", lambda: _worker_listed(int(port)))
    async with playwright_driver() as pw:
        connected = await pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}", no_defaults=True)
        try:
            yield connected.contexts[0]
        finally:
            await connected.close()


def _worker_listed(port: int) -> bool:
    url = f"http://127.0.0.1:{port}/json/list"
    with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 - our own loopback DevTools
        targets = json.load(answer)
    prefix = f"chrome-extension://{EXTENSION_ID}/"
    return any(
        t.get("type") == "service_worker" and str(t.get("url", "")).startswith(prefix)
        for t in targets
    )


async def extension_worker(context: BrowserContext) -> Worker:
    """The extension's service worker, as Playwright sees it in ``context``."""

    def found() -> Worker | None:
        return next((w for w in context.service_workers if EXTENSION_ID in w.url), None)

    return await until("Playwright sees the extension's worker", found)
