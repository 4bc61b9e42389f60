"""A real agent in CI (issue 15): Claude Code (npm `@anthropic-ai/claude-code`, pinned in
tests/agent/package.json) drives tabwarden in real Chromium, offline, its "model" a scripted
Messages API on 127.0.0.1 (tests/browser/scripted_api.py) that answers with tool calls and checks
every tool result Claude Code sends back.

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
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tabwarden import ceremony
from tabwarden.browser import ThrowawayBrowser
from tabwarden.demo import provision_throwaway_trust
from tests.browser.harness import chromium, confirm_page, press, shows
from tests.browser.scripted_api import Script, Step, ToolResult, scripted_api
from tests.pty_cli import PROMPT, spawn_cli

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / "tests" / "agent" / "node_modules" / ".bin" / "claude"
GUARD = 420.0  # hang guard only
RUN_S = 240.0  # one `claude -p` run; generous for a busy 2-core machine


def _claude_env(browser: ThrowawayBrowser, api: str, project: Path) -> dict[str, str]:
    env = dict(browser.env)
    env.update(
        HOME=str(project.parent),  # a fresh HOME: Claude Code's config lives in ~/.claude.json
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.defpath)}",
        ANTHROPIC_BASE_URL=api,
        ANTHROPIC_API_KEY="sk-ant-scripted-not-a-key",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ENABLE_TOOL_SEARCH="false",
    )
    return env


async def _claude(env: dict[str, str], project: Path, prompt: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        str(CLAUDE), "-p", prompt, "--allowedTools", "mcp__tabwarden",
        cwd=project, env=env, stdin=subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), RUN_S)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        raise AssertionError(f"claude did not finish: {out.decode(errors='replace')}") from None
    return proc.returncode or 0, out.decode(errors="replace")


def _pair_claude(env: dict[str, str]) -> str:
    """`tabwarden pair-client` on a pty that is its controlling terminal: pick the one client it
    saw start `tabwarden mcp`, type the phrase. Returns what the terminal showed."""
    child = spawn_cli(env, "pair-client", "--label", "claude-code")
    child.expect(b"pair which one? number: ")
    child.send("1\n")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output
    return output.decode(errors="replace")


def _ok(result: ToolResult) -> None:
    assert not result.is_error, result.text[:500]


def test_claude_code_drives_the_chain_after_pair_client(site: str) -> None:
    assert CLAUDE.exists(), "Claude Code is missing: run scripts/setup (npm ci in tests/agent)"
    browser = ThrowawayBrowser()
    browser.install_host()
    try:
        asyncio.run(asyncio.wait_for(_scenario(browser, site), GUARD))
    finally:
        browser.close()


async def _scenario(browser: ThrowawayBrowser, site: str) -> None:
    # Another client is paired, so clients are pinned: Claude Code is not that client.
    provision_throwaway_trust(
        browser.config, client_exe=os.path.realpath("/proc/self/exe"), origins=[site]
    )
    project = browser.root / "agent-home" / "project"
    project.mkdir(parents=True)

    def refused(result: ToolResult) -> None:
        assert result.is_error and "client_not_paired" in result.text, result.text[:500]

    before = Script([Step("bridge_status", lambda _: {}, refused)])
    tab: dict[str, Any] = {}

    def opened(result: ToolResult) -> None:
        _ok(result)
        tab["id"] = result.json()["tab"]["id"]

    def connected(result: ToolResult) -> None:
        _ok(result)
        assert result.json()["extensionConnected"] is True, result.text

    def snapshot(result: ToolResult) -> None:
        _ok(result)
        assert "Sign in" in result.text, result.text[:500]

    def screenshot(result: ToolResult) -> None:
        _ok(result)
        assert result.images, f"no image reached the agent: {result.text[:300]}"
        assert result.images[0]["source"]["media_type"] == "image/png"
        assert len(result.images[0]["source"]["data"]) > 1000

    after = Script(
        [
            Step("bridge_status", lambda _: {}, connected),
            Step("tab_open", lambda _: {"url": f"{site}/"}, opened),
            Step("page_snapshot", lambda _: {"tabId": tab["id"]}, snapshot),
            Step("page_click", lambda _: {"tabId": tab["id"], "selector": "#go"}, _ok),
            Step("page_screenshot", lambda _: {"tabId": tab["id"]}, screenshot),
        ]
    )

    async with chromium(browser) as context:
        with scripted_api(before) as api:
            env = _claude_env(browser, api, project)
            added = subprocess.run(  # noqa: S603 (the README's line, as a person's shell runs it)
                ["bash", "-c", f'"{CLAUDE}" mcp add tabwarden -- "$(command -v tabwarden)" mcp'],
                cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            assert added.returncode == 0, added.stdout + added.stderr
            status, out = await _claude(env, project, "Check the tabwarden bridge.")
            assert before.failures == [] and before.finished, (before.failures, out)
            assert len(before.results) == 1, out

        shown = _pair_claude(env)
        assert "claude" in shown and "paired client 'claude-code'" in shown, shown

        with scripted_api(after) as api:
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
            assert after.failures == [] and after.finished, (after.failures, out)
            assert len(after.results) == len(after.steps), out
            assert status == 0, out

        submitted = [p for p in context.pages if "/done" in p.url]
        assert len(submitted) == 1, [p.url for p in context.pages]
