"""Driving a real agent CLI (Claude Code, Codex; npm packages pinned in tests/agent/package.json)
through tabwarden in real Chromium, offline, its "model" a scripted API
(tests/browser/scripted_api.py): what the agent tests share. The chain is the browser fixtures'
(``trusted``, ``context``): a throwaway trust record with *another* client (this test process)
paired, so clients are pinned and the agent's first run is refused (``client_not_paired``)
until ``tabwarden pair-client``, at a real terminal (a pty we hold), picks the agent from the
clients it saw.

Helpers only (no tests): the agent test modules import from here, never from each other. It
never passes a real model key: each CLI gets a scripted base URL and a placeholder key."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabwarden.cli import ceremony
from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.scripted_api import Script, Step, ToolResult
from tests.deadline import NeverHappened, within
from tests.pty_cli import PROMPT, spawn_cli

REPO = Path(__file__).resolve().parents[2]
#: Where scripts/setup installs the agent CLIs (npm ci in tests/agent).
AGENT_BIN = REPO / "tests" / "agent" / "node_modules" / ".bin"
AGENT_TEST_S = 420.0
"""A whole agent test's hang guard (``pytest.mark.deadline(AGENT_TEST_S)``)."""
RUN_S = 240.0  # one agent run; generous for a busy 2-core machine


def installed(cli: Path) -> Path:
    """``cli``, which must be installed (scripts/setup runs npm ci in tests/agent)."""
    assert cli.exists(), f"{cli.name} is missing: run scripts/setup (npm ci in tests/agent)"
    return cli


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
    name = Path(argv[0]).name
    try:
        out, _ = await within(f"{name} finished", proc.communicate(), timeout_s=RUN_S)
    except NeverHappened:
        proc.kill()
        out, _ = await proc.communicate()
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
