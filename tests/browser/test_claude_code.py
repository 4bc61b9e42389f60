"""A real agent in CI (the chain as a person's agent drives it): Claude Code (npm
`@anthropic-ai/claude-code`, pinned in tests/agent/package.json) drives tabwarden in real Chromium,
offline, its "model" a scripted Messages API on 127.0.0.1 (``scripted_messages_api`` in
tests/browser/scripted_api.py) that answers with tool calls and checks every tool result Claude Code
sends back; the driving code it shares with Codex's test is tests/browser/agent_cli.py.

As a person would follow the README: `claude mcp add tabwarden -- "$(command -v tabwarden)" mcp`
(the README's line, run by a shell); the first run is refused with `client_not_paired` (another
client is paired, so clients are pinned); `tabwarden pair-client` at a real terminal (a pty we
hold), picking Claude Code from the clients it saw; the second run goes bridge_status → tab_open
→ page_snapshot → a submit click, confirmed in tabwarden's window → page_screenshot (an image
reaches the agent).

Claude Code defers MCP tools behind its tool search when ENABLE_TOOL_SEARCH allows; the script
is no model and cannot search, so the test turns it off. Everything else is Claude Code as
installed: its own MCP client, its own permission check (`--allowedTools mcp__tabwarden`)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.agent_cli import (
    AGENT_BIN,
    AGENT_TEST_S,
    agent_env,
    assert_script_ran,
    installed,
    pair_agent,
    read_site_steps,
    run_agent,
    succeeded,
    unpaired_script,
)
from tests.browser.harness import confirm_page, page_at, press, shows
from tests.browser.scripted_api import Script, Step, ToolResult, scripted_messages_api

pytestmark = [pytest.mark.browser, pytest.mark.pooled, pytest.mark.deadline(AGENT_TEST_S)]

CLAUDE = AGENT_BIN / "claude"


def _claude_env(browser: ThrowawayBrowser, api: str, project: Path) -> dict[str, str]:
    # A fresh HOME: Claude Code's config lives in ~/.claude.json.
    return agent_env(
        browser,
        project.parent,
        ANTHROPIC_BASE_URL=api,
        ANTHROPIC_API_KEY="sk-ant-scripted-not-a-key",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ENABLE_TOOL_SEARCH="false",
    )


async def _claude(env: dict[str, str], project: Path, prompt: str) -> tuple[int, str]:
    return await run_agent(
        [str(CLAUDE), "-p", prompt, "--allowedTools", "mcp__tabwarden"], env, project
    )


async def test_claude_code_drives_the_chain_after_pair_client(
    trusted: ThrowawayBrowser, context: BrowserContext, site: str
) -> None:
    browser = trusted
    installed(CLAUDE)
    project = browser.root / "agent-home" / "project"
    project.mkdir(parents=True)

    def screenshot(result: ToolResult) -> None:
        succeeded(result)
        assert result.images, f"no image reached the agent: {result.text[:300]}"
        assert result.images[0]["source"]["media_type"] == "image/png"
        assert len(result.images[0]["source"]["data"]) > 1000

    before = unpaired_script()
    tab: dict[str, Any] = {}
    after = Script(
        [
            *read_site_steps(site, tab),
            Step("page_click", lambda _: {"tabId": tab["id"], "selector": "#go"}, succeeded),
            Step("page_screenshot", lambda _: {"tabId": tab["id"]}, screenshot),
        ]
    )

    with scripted_messages_api(before) as api:
        env = _claude_env(browser, api, project)
        added = subprocess.run(  # noqa: S603 (the README's line, as a person's shell runs it)
            ["bash", "-c", f'"{CLAUDE}" mcp add tabwarden -- "$(command -v tabwarden)" mcp'],
            cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert added.returncode == 0, added.stdout + added.stderr
        status, out = await _claude(env, project, "Check the tabwarden bridge.")
        assert_script_ran(before, out)

    shown = pair_agent(env, "claude-code")
    assert "claude" in shown, shown

    with scripted_messages_api(after) as api:
        env = _claude_env(browser, api, project)
        run = asyncio.create_task(_claude(env, project, "Sign in on the test site."))
        asking = asyncio.create_task(confirm_page(context))  # the submit click asks
        await asyncio.wait({run, asking}, return_when=asyncio.FIRST_COMPLETED)
        if run.done():  # the script stopped before the click: say why
            asking.cancel()
            status, out = run.result()
            raise AssertionError((after.failures, out))
        window = await asking
        await shows(window, "submits a form")
        await press(window, "#allow")
        status, out = await run
        assert_script_ran(after, out)
        assert status == 0, out

    await page_at(context, "the form submitted (a page on /done)", lambda url: "/done" in url)
