"""Driving a real agent CLI (Claude Code, Codex; npm packages pinned in tests/agent/package.json)
through tabwarden in real Chromium, offline, its "model" a scripted API
(tests/browser/scripted_api.py): what the agent tests share. The chain is set up the way the
tests' story needs it: a throwaway trust record with *another* client paired, so clients are
pinned and the agent's first run is refused (``client_not_paired``) until ``tabwarden
pair-client``, at a real terminal (a pty we hold), picks the agent from the clients it saw.

Helpers only (no tests): the agent test modules import from here, never from each other. It
never passes a real model key: each CLI gets a scripted base URL and a placeholder key."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from tabwarden.cli import ceremony
from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import trust_this_process
from tests.browser.scripted_api import Script, Step, ToolResult
from tests.pty_cli import PROMPT, spawn_cli

REPO = Path(__file__).resolve().parents[2]
#: Where scripts/setup installs the agent CLIs (npm ci in tests/agent).
AGENT_BIN = REPO / "tests" / "agent" / "node_modules" / ".bin"
GUARD = 420.0  # a whole agent test: hang guard only
RUN_S = 240.0  # one agent run; generous for a busy 2-core machine


def agent_test(cli: Path, scenario: Callable[[ThrowawayBrowser], Awaitable[None]]) -> None:
    """Run ``scenario`` against a fresh throwaway browser with our host installed, under
    ``GUARD``; the browser is closed whatever happens."""
    assert cli.exists(), f"{cli.name} is missing: run scripts/setup (npm ci in tests/agent)"
    browser = ThrowawayBrowser()
    browser.install_host()
    try:
        asyncio.run(asyncio.wait_for(scenario(browser), GUARD))
    finally:
        browser.close()


def pin_another_client(browser: ThrowawayBrowser, site: str) -> None:
    """The throwaway record: ``site`` approved, and this process's interpreter paired as the MCP
    client, so clients are pinned and the agent is not that client."""
    trust_this_process(browser, [site])


def agent_env(browser: ThrowawayBrowser, home: Path, **extra: str) -> dict[str, str]:
    """The browser's environment (its config and runtime directories) with a fresh ``HOME``
    (where the agent keeps its config), our interpreter's ``tabwarden`` first on ``PATH``, and
    ``extra``."""
    env = dict(browser.env)
    env.update(
        HOME=str(home),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.defpath)}",
        **extra,
    )
    return env


async def run_agent(argv: Sequence[str], env: dict[str, str], project: Path) -> tuple[int, str]:
    """One non-interactive agent run in ``project``; its exit status and output (stderr folded
    in). Killed, and the test failed with what it printed, after ``RUN_S``."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=project, env=env, stdin=subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), RUN_S)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        name = Path(argv[0]).name
        raise AssertionError(f"{name} did not finish: {out.decode(errors='replace')}") from None
    return proc.returncode or 0, out.decode(errors="replace")


def pair_agent(env: dict[str, str], label: str) -> str:
    """`tabwarden pair-client` on a pty that is its controlling terminal: pick the one client it
    saw start `tabwarden mcp`, type the phrase; it must succeed and say it paired ``label``.
    Returns what the terminal showed."""
    child = spawn_cli(env, "pair-client", "--label", label)
    child.expect(b"pair which one? number: ")
    child.send("1\n")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output
    shown = output.decode(errors="replace")
    assert f"paired client '{label}'" in shown, shown
    return shown


def succeeded(result: ToolResult) -> None:
    assert not result.is_error, result.text[:500]


def refused_unpaired(result: ToolResult) -> None:
    assert result.is_error and "client_not_paired" in result.text, result.text[:500]


def unpaired_script() -> Script:
    """The first run, before pair-client: one bridge_status, refused."""
    return Script([Step("bridge_status", lambda _: {}, refused_unpaired)])


def read_site_steps(site: str, tab: dict[str, Any]) -> list[Step]:
    """bridge_status (the extension connected) → tab_open on ``site`` (its id kept in
    ``tab["id"]``) → page_snapshot showing the fixture form's "Sign in"."""

    def connected(result: ToolResult) -> None:
        succeeded(result)
        assert result.json()["extensionConnected"] is True, result.text

    def opened(result: ToolResult) -> None:
        succeeded(result)
        tab["id"] = result.json()["tab"]["id"]

    def snapshot(result: ToolResult) -> None:
        succeeded(result)
        assert "Sign in" in result.text, result.text[:500]

    return [
        Step("bridge_status", lambda _: {}, connected),
        Step("tab_open", lambda _: {"url": f"{site}/"}, opened),
        Step("page_snapshot", lambda _: {"tabId": tab["id"]}, snapshot),
    ]


def assert_script_ran(script: Script, out: str) -> None:
    """Every step of ``script`` went out and its result passed its check."""
    assert script.failures == [] and script.finished, (script.failures, out[-3000:])
    assert len(script.results) == len(script.steps), out[-3000:]
