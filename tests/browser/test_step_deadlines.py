"""Deadlines on every step (so no call hangs), in real Chromium: a page blocked by a JavaScript
dialog ends the call at once with `dialog_open` — from the extension, long before the MCP server's
own deadline (a page stuck otherwise ends with `timeout` naming the step: tests/extension) — and
later calls on that tab answer the same instead of hanging behind it, while other tabs work; once
the person answers the dialog themselves, the tab works again. The real chain: MCP client,
`tabwarden mcp`, the host Chrome launched, the extension."""

from __future__ import annotations

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tests.browser.harness import (
    chromium,
    extension_connected,
    keep_dialogs_open,
    mcp_client,
    ok,
    shows_card,
    trust_this_process,
)
from tests.deadline import until
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


async def test_a_dialog_blocked_page_answers_dialog_open_at_once(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.root / "config"
    trust_this_process(browser, [site])
    # Narrowing, free: the call's budget becomes 5 + 15 s (the server) and 18 s (the extension).
    store.add_restriction(config / "trust.json", "confirmTimeoutSeconds", 5, 1_800_000_000)

    async with chromium(browser) as context, mcp_client(browser) as agent:
        dialogs = keep_dialogs_open(context)
        await extension_connected(agent)
        blocked = (await ok(agent, "tab_open", {"url": f"{site}/dialog"}))["tab"]["id"]
        other = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]

        clicked = await agent.call_tool("page_click", {"tabId": blocked, "selector": "#ask"})
        error = tool_error(clicked) or {}
        assert error.get("code") == "dialog_open", clicked.content
        # The extension saw the dialog open while the click ran (it may have acted).
        assert "while page_click ran" in error["message"] and "alert()" in error["message"]
        assert not shows_card(error["message"])  # the dialog's text, masked as page text is
        assert error["retry"] == "after_check"

        read = tool_error(await agent.call_tool("page_text", {"tabId": blocked})) or {}
        assert read.get("code") == "dialog_open" and "blocked by an alert()" in read["message"]
        assert read["retry"] == "safe"  # a read

        # Other tabs are not stuck behind it.
        state = await ok(agent, "page_get_state", {"tabId": other, "selector": "#plain"})
        assert state["text"] == "Plain"
        tabs = await ok(agent, "tab_list", {})
        assert {t["id"] for t in tabs["tabs"]} == {blocked, other}

        # The dialog was really open all along; once answered, the tab works again. Playwright's
        # own event about it may reach this process after the extension's answer did: wait on it.
        await until("Playwright reports the open dialog", lambda: dialogs)
        assert [d.type for d in dialogs] == ["alert"]
        await dialogs[0].dismiss()

        async def answered() -> bool:
            after = await agent.call_tool(
                "page_get_state", {"tabId": blocked, "selector": "#state"}
            )
            return not after.is_error and after.structured_content["text"] == "answered"

        await until("the blocked tab answers again", answered)
