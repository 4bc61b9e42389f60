"""Diagnostics, in real Chromium through the real chain: another debugger on an agent's tab (a CDP
client, as DevTools is) beside tabwarden's, and the extension's own errors in the host's log.

Chrome's debugger is multi-client: a CDP client (DevTools, Playwright's session, which is attached
to every tab from its creation, before tabwarden's) never holds a tab against chrome.debugger, and
Chrome's "Another debugger is already attached" is said only of the extension's own attachment
(docs/platform-facts-dialogs.md), which extension/worker/debugger.js takes over. So what this file
proves of the debugger is that a second debugger, with its own domains on (Debugger, Runtime,
Page), breaks nothing either way: the agent's actions go on while it is attached and after it
left, and it still answers. The retry with backoff and the `debugger_detached` answer for a tab
held on every try are proven against Chrome's refusal in tests/extension/debugger.test.mjs.

The host's log is its stderr, which Chrome passes on to its own: so this module launches the
throwaway Chromium itself (headless, as every browser test's, its output in ``log_path``) and
connects over CDP, in place of the conftest's Playwright launch, whose browser output nobody
can read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext, Page

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import ok
from tests.browser.own_launch import extension_worker, own_launch
from tests.deadline import until

pytestmark = pytest.mark.browser

#: What the extension forwards of a flood, at most, in one window (extension/worker/error-report.js
#: BURST; the host holds the same bound, host/extension_log.py).
BURST = 10
#: A secret in a forced error's message: Chrome's log must never show it.
SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c"


@pytest.fixture
async def context(trusted: ThrowawayBrowser) -> AsyncIterator[BrowserContext]:
    """The throwaway Chromium, headless, started with its own command line and a DevTools port,
    its output (the host's log with it) in ``trusted.log_path``; replaces the conftest's."""
    async with own_launch(trusted) as launched:
        yield launched


def _host_lines(browser: ThrowawayBrowser, text: str) -> list[str]:
    return [line for line in browser.log_tail(100_000).splitlines() if text in line]


async def _page_of(context: BrowserContext, site: str) -> Page:
    """The Playwright page of the agent's one tab on ``site``."""

    async def found() -> Page | None:
        return next((p for p in context.pages if p.url.startswith(site)), None)

    return await until("the agent's tab is a page of the context", found)


async def _out(cdp: Any) -> str:
    got = await cdp.send(
        "Runtime.evaluate",
        {"expression": "document.getElementById('out').textContent", "returnByValue": True},
    )
    return str(got["result"]["value"])


@pytest.mark.promise("H4-80")
async def test_a_second_debugger_on_an_agent_tab_holds_nothing_and_is_left_undisturbed(
    agent: Client, context: BrowserContext, tab: int, site: str
) -> None:
    page = await _page_of(context, site)
    other = await context.new_cdp_session(page)
    for domain in ("Page", "Runtime", "Debugger"):
        await other.send(f"{domain}.enable")

    # Trusted input through tabwarden's debugger, beside the other one.
    await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
    assert await _out(other) == "clicked:1"
    text = await ok(agent, "page_text", {"tabId": tab})
    assert "clicked:1" in str(text)

    await other.detach()
    await ok(agent, "page_click", {"tabId": tab, "selector": "#plain"})
    again = await context.new_cdp_session(page)
    assert await _out(again) == "clicked:2"
    await again.detach()
    status = await ok(agent, "bridge_status", {})
    assert status.get("extensionConnected") is True, status


@pytest.mark.promise("H4-82")
async def test_the_extensions_own_errors_reach_the_host_log_masked_and_a_flood_is_capped(
    trusted: ThrowawayBrowser, agent: Client, context: BrowserContext
) -> None:
    worker = await extension_worker(context)
    # An uncaught error in the worker, carrying a bearer credential and a password.
    await worker.evaluate(
        """(secret) => { setTimeout(() => {
            throw new Error(`forced: Authorization: Bearer ${secret} password=hunter2`);
        }, 0); }""",
        SECRET,
    )
    [line] = await until(
        "the forced error is in the host's log",
        lambda: _host_lines(trusted, "extension error in worker: Error: forced:") or None,
    )
    assert "tabwarden-host[" in line
    log = trusted.log_tail(100_000)
    assert SECRET not in log and "hunter2" not in log

    # A flood of unhandled rejections: all dispatched in one go, the first few forwarded.
    await worker.evaluate(
        "() => { for (let i = 0; i < 200; i += 1) Promise.reject(new Error(`flood ${i}`)); }"
    )
    await until(
        "the flood's first line is in the host's log",
        lambda: _host_lines(trusted, "extension rejection in worker: Error: flood") or None,
    )
    # Every forwarded report was posted before this call's reply on the same native port.
    await ok(agent, "tab_list", {})
    flood = _host_lines(trusted, "extension rejection in worker: Error: flood")
    assert 1 <= len(flood) <= BURST, flood
