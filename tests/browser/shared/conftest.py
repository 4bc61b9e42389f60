"""One chain per module: the tests of each module in this folder share one Chromium, one host,
one ``tabwarden mcp`` and one agent (tests/browser/chain.py), and so pay for the launch once
instead of once a test. Each test still opens its own ``tab``, and fails if it leaves the
extension anything the next test could see (``chain.leaves_nothing``). ``--dist loadgroup``
keeps a module's tests on one worker (tests/xdist_groups.py).

A module's own ``site`` and ``origins`` are module-scoped here (pytest answers ScopeMismatch when
one is not). A test that changes the record, kills or relaunches anything, or needs a browser of
its own belongs one folder up, where each test has its own chain."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from mcp import Client
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser import chain
from tests.browser.conftest import SITE, SITE_FALLBACK
from tests.browser.harness import Streams, chromium, served_pages, trust_this_process


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with served_pages(SITE, fallback=SITE_FALLBACK) as served:
        yield served.origin


@pytest.fixture(scope="module")
def origins(site: str) -> list[str]:
    return [site]


@pytest.fixture(scope="module")
def browser() -> Iterator[ThrowawayBrowser]:
    with chain.new_browser() as b:
        yield b


@pytest.fixture(scope="module")
def trusted(browser: ThrowawayBrowser, origins: list[str]) -> ThrowawayBrowser:
    trust_this_process(browser, origins)
    return browser


@pytest.fixture(scope="module")
async def agent_server(trusted: ThrowawayBrowser) -> AsyncIterator[Streams]:
    async with chain.server(trusted) as streams:
        yield streams


@pytest.fixture(scope="module")
async def context(
    trusted: ThrowawayBrowser, agent_server: Streams
) -> AsyncIterator[BrowserContext]:
    async with chromium(trusted) as launched:
        yield launched


@pytest.fixture(scope="module")
async def agent(agent_server: Streams, context: BrowserContext) -> AsyncIterator[Client]:
    async with chain.connected(agent_server) as client:
        yield client


@pytest.fixture(autouse=True)
async def leaves_nothing(agent: Client, context: BrowserContext) -> AsyncIterator[None]:
    async with chain.leaves_nothing(context):
        yield
