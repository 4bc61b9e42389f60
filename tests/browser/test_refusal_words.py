"""A refusal because a policy switch is off teaches, through the real chain in real headless
Chromium: page_eval while eval is off, page_fill into a password field while passwordFill is off,
and arming a dialog answer while dialogArming is off each answer policy_denied naming the key and
the exact `tabwarden policy set KEY=true` (the password one also the alternative: the person signs
in themselves), and nothing was run, typed or armed."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.browser.harness import ok
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


async def _refusal(agent: Client, tool: str, args: dict[str, object]) -> str:
    error = tool_error(await agent.call_tool(tool, args)) or {}
    assert error.get("code") == "policy_denied", (tool, error)
    message: str = error["message"]
    return message


@pytest.mark.promise("H4-71")
async def test_a_switch_refusal_names_the_key_and_the_command(agent: Client, tab: int) -> None:
    words = await _refusal(agent, "page_eval", {"tabId": tab, "code": "document.title = 'ran'"})
    assert '"eval"' in words and "`tabwarden policy set eval=true` at a terminal" in words
    assert '"Allow page scripts (tap)" button' in words
    assert (await ok(agent, "page_get_state", {"tabId": tab, "selector": "title"}))["text"] != "ran"

    words = await _refusal(agent, "page_fill", {"tabId": tab, "selector": "#pw", "value": "x"})
    assert "passwordFill is off" in words
    assert "`tabwarden policy set passwordFill=true` at a terminal" in words
    assert "ask the person to sign in themselves" in words
    state = await ok(agent, "page_get_state", {"tabId": tab, "selector": "#pw"})
    assert "x" != state.get("value")

    words = await _refusal(agent, "page_dialog", {"tabId": tab, "arm": "accept"})
    assert "dialogArming" in words and "`tabwarden policy set dialogArming=true`" in words
