"""Deadlines on every step (issue 11), in real Chromium: a page blocked by a JavaScript dialog
ends the call with `timeout` naming the step — from the extension, before the MCP server's own
deadline — and later calls on that tab answer the same instead of hanging behind it, while other
tabs work. The real chain: MCP client, `tabwarden mcp`, the host Chrome launched, the extension."""

from __future__ import annotations

import asyncio
import os

import pytest
from playwright.async_api import Dialog

from tabwarden.browser import ThrowawayBrowser
from tabwarden.demo import provision_throwaway_trust, wait_for_extension
from tabwarden.trust import store
from tests.browser.harness import chromium, mcp_client
from tests.browser.test_page_tools import ok
from tests.fakes import tool_error

pytestmark = pytest.mark.browser


def test_a_dialog_blocked_page_answers_timeout_naming_the_step(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.root / "config"
    provision_throwaway_trust(config, client_exe=os.path.realpath("/proc/self/exe"), origins=[site])
    # Narrowing, free: the call's budget becomes 5 + 15 s (the server) and 18 s (the extension).
    store.add_restriction(config / "trust.json", "confirmTimeoutSeconds", 5, 1_800_000_000)

    async def scenario() -> None:
        async with chromium(browser) as context, mcp_client(browser) as agent:
            # Playwright (our window into the browser) dismisses dialogs unless someone listens:
            # listen and leave them open, as a person who has not looked yet would.
            dialogs: list[Dialog] = []

            def keep_open(dialog: Dialog) -> None:
                dialogs.append(dialog)

            context.on("dialog", keep_open)
            await wait_for_extension(agent, asyncio.get_running_loop().time() + 60)
            blocked = (await ok(agent, "tab_open", {"url": f"{site}/dialog"}))["tab"]["id"]
            other = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

            clicked = await agent.call_tool("page_click", {"tabId": blocked, "selector": "#ask"})
            error = tool_error(clicked) or {}
            assert error.get("code") == "timeout", clicked.content
            # The extension's step deadline, not the server's "no answer from the browser".
            assert 'step "click"' in error["message"] and "dialog" in error["message"]
            assert error["retry"] == "after_check"  # a click whose outcome is unknown

            read = tool_error(await agent.call_tool("page_text", {"tabId": blocked})) or {}
            assert read.get("code") == "timeout" and "page's text" in read["message"]
            assert read["retry"] == "safe"  # a read

            # Other tabs are not stuck behind it.
            state = await ok(agent, "page_get_state", {"tabId": other, "selector": "#plain"})
            assert state["text"] == "Plain"
            tabs = await ok(agent, "tab_list", {})
            assert {t["id"] for t in tabs["tabs"]} == {blocked, other}

            # The dialog was really open all along; once answered, the tab works again.
            assert [d.type for d in dialogs] == ["alert"]
            await dialogs[0].dismiss()
            deadline = asyncio.get_running_loop().time() + 30
            while True:
                after = await agent.call_tool(
                    "page_get_state", {"tabId": blocked, "selector": "#state"}
                )
                if not after.is_error and after.structured_content["text"] == "answered":
                    break
                assert asyncio.get_running_loop().time() < deadline, after.content
                await asyncio.sleep(0.1)

    asyncio.run(asyncio.wait_for(scenario(), 240))
