"""A second real agent (issue 15: "if another agent CLI can be driven the same way offline, add
it"): Codex (npm `@openai/codex`, pinned in tests/agent/package.json) drives tabwarden in real
Chromium, offline, its "model" a scripted Responses API on 127.0.0.1
(tests/browser/scripted_responses.py) reached through a custom ``model_providers`` entry.

As a person would: ``~/.codex/config.toml`` gets the MCP server block ``tabwarden status``
prints for Codex (its ``env_vars`` matter: Codex starts an MCP server with only a short list of
variables, and without ``XDG_RUNTIME_DIR`` and friends ``tabwarden mcp`` would look for the
socket in the wrong place); the first run is refused with ``client_not_paired`` (another client
is paired, so clients are pinned); ``tabwarden pair-client`` at a real terminal (a pty we hold)
picks Codex from the clients it saw; the second run goes bridge_status → tab_open →
page_snapshot. Everything else is Codex as installed: its own MCP client, its own sandbox, and
its own approval layer (``codex exec`` never asks, so the server's tools are approved in the
config, ``default_tools_approval_mode = "approve"``, as Claude Code's test passes
``--allowedTools``)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tabwarden import ceremony
from tabwarden.browser import ThrowawayBrowser
from tabwarden.demo import provision_throwaway_trust
from tabwarden.status import mcp_config_lines
from tests.browser.harness import chromium
from tests.browser.scripted_api import Script, Step, ToolResult
from tests.browser.scripted_responses import scripted_responses_api
from tests.pty_cli import PROMPT, spawn_cli

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CODEX = REPO / "tests" / "agent" / "node_modules" / ".bin" / "codex"
GUARD = 420.0  # hang guard only
RUN_S = 240.0  # one `codex exec` run; generous for a busy 2-core machine
KEY_VAR = "TABWARDEN_SCRIPTED_MODEL_KEY"  # the provider's env_key: any value, never a real key


def _codex_config(api: str) -> str:
    """A model provider pointing at the script, then the block `tabwarden status` prints."""
    [line] = [line for line in mcp_config_lines() if line.startswith("Codex")]
    block = line.split(": ", 1)[1]
    header, _, body = block.partition("] ")
    settings = re.findall(r'(\w+ = (?:"[^"]*"|\[[^\]]*\]))', body)
    assert {s.split(" = ")[0] for s in settings} == {"command", "args", "env_vars"}, line
    return "\n".join(
        [
            'model = "scripted"',
            'model_provider = "scripted"',
            "[model_providers.scripted]",
            'name = "scripted"',
            f'base_url = "{api}"',
            'wire_api = "responses"',
            f'env_key = "{KEY_VAR}"',
            header + "]",
            *settings,
            # Codex's own approval layer (as --allowedTools is Claude Code's): `codex exec` never
            # asks, so a tool that is not read-only is refused unless the person approved the
            # server's tools. tabwarden's own guards (origins, the confirm window) still apply.
            'default_tools_approval_mode = "approve"',
            "",
        ]
    )


def _codex_env(browser: ThrowawayBrowser, home: Path) -> dict[str, str]:
    env = dict(browser.env)
    env.update(
        HOME=str(home),  # a fresh HOME: Codex's config lives in ~/.codex
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', os.defpath)}",
        **{KEY_VAR: "scripted-not-a-key"},
    )
    env.pop("CODEX_HOME", None)
    env.pop("OPENAI_API_KEY", None)
    return env


async def _codex(env: dict[str, str], project: Path, prompt: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        str(CODEX), "exec", "--skip-git-repo-check", "--json", prompt,
        cwd=project, env=env, stdin=subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), RUN_S)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        raise AssertionError(f"codex did not finish: {out.decode(errors='replace')}") from None
    return proc.returncode or 0, out.decode(errors="replace")


def _pair_codex(env: dict[str, str]) -> str:
    """`tabwarden pair-client` on a pty: pick the one client it saw start `tabwarden mcp`."""
    child = spawn_cli(env, "pair-client", "--label", "codex")
    child.expect(b"pair which one? number: ")
    child.send("1\n")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output
    return output.decode(errors="replace")


def _ok(result: ToolResult) -> None:
    assert not result.is_error, result.text[:500]


def test_codex_drives_the_chain_after_pair_client(site: str) -> None:
    assert CODEX.exists(), "Codex is missing: run scripts/setup (npm ci in tests/agent)"
    browser = ThrowawayBrowser()
    browser.install_host()
    try:
        asyncio.run(asyncio.wait_for(_scenario(browser, site), GUARD))
    finally:
        browser.close()


async def _scenario(browser: ThrowawayBrowser, site: str) -> None:
    provision_throwaway_trust(
        browser.config, client_exe=os.path.realpath("/proc/self/exe"), origins=[site]
    )
    home = browser.root / "codex-home"
    project = home / "project"
    project.mkdir(parents=True)
    (home / ".codex").mkdir()
    env = _codex_env(browser, home)

    def refused(result: ToolResult) -> None:
        assert result.is_error and "client_not_paired" in result.text, result.text[:500]

    before = Script([Step("bridge_status", lambda _: {}, refused)])
    tab: dict[str, Any] = {}

    def connected(result: ToolResult) -> None:
        _ok(result)
        assert result.json()["extensionConnected"] is True, result.text

    def opened(result: ToolResult) -> None:
        _ok(result)
        tab["id"] = result.json()["tab"]["id"]

    def snapshot(result: ToolResult) -> None:
        _ok(result)
        assert "Sign in" in result.text, result.text[:500]

    after = Script(
        [
            Step("bridge_status", lambda _: {}, connected),
            Step("tab_open", lambda _: {"url": f"{site}/"}, opened),
            Step("page_snapshot", lambda _: {"tabId": tab["id"]}, snapshot),
        ]
    )

    async with chromium(browser):
        with scripted_responses_api(before) as api:
            (home / ".codex" / "config.toml").write_text(_codex_config(api))
            status, out = await _codex(env, project, "Check the tabwarden bridge.")
            assert before.failures == [] and before.finished, (before.failures, out[-3000:])
            assert len(before.results) == 1, out[-3000:]

        shown = _pair_codex(env)
        assert "codex" in shown and "paired client 'codex'" in shown, shown

        with scripted_responses_api(after) as api:
            (home / ".codex" / "config.toml").write_text(_codex_config(api))
            status, out = await _codex(env, project, "Read the test site.")
            assert after.failures == [] and after.finished, (after.failures, out[-3000:])
            assert len(after.results) == len(after.steps), out[-3000:]
            assert status == 0, out[-3000:]
