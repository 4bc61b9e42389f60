"""Diagnostics, in real Chromium through the real chain: another debugger on an agent's tab (a CDP
client, as DevTools is) beside tabwarden's.

Chrome's debugger is multi-client: a CDP client (DevTools, Playwright's session, which is attached
to every tab from its creation, before tabwarden's) never holds a tab against chrome.debugger, and
Chrome's "Another debugger is already attached" is said only of the extension's own attachment
(docs/platform-facts-dialogs.md), which extension/worker/debugger.js takes over. So what this file
proves of the debugger is that a second debugger, with its own domains on (Debugger, Runtime,
Page), breaks nothing either way: the agent's actions go on while it is attached and after it
left, and it still answers. The retry with backoff and the `debugger_detached` answer for a tab
held on every try are proven against Chrome's refusal in tests/extension/debugger.test.mjs."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from playwright.async_api import BrowserContext, Page

from tests.browser.harness import ok
from tests.deadline import until

pytestmark = pytest.mark.browser


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
