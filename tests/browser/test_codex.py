"""A second real agent (another agent CLI driven the same way offline, so the chain is not shaped to
one client): Codex (npm `@openai/codex`, pinned in tests/agent/package.json) drives tabwarden in
real Chromium, offline, its "model" a scripted Responses API on 127.0.0.1
(``scripted_responses_api`` in tests/browser/scripted_api.py) reached through a custom
``model_providers`` entry; the driving code it shares with Claude Code's test is
tests/browser/agent_cli.py.

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

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import BrowserContext

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.cli.status import mcp_config_lines
from tests.browser.agent_cli import (
    AGENT_BIN,
    AGENT_TEST_S,
    agent_env,
    assert_script_ran,
    installed,
    pair_agent,
    read_site_steps,
    run_agent,
    unpaired_script,
)
from tests.browser.scripted_api import Script, scripted_responses_api

pytestmark = [pytest.mark.browser, pytest.mark.pooled, pytest.mark.deadline(AGENT_TEST_S)]

CODEX = AGENT_BIN / "codex"
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
    # A fresh HOME: Codex's config lives in ~/.codex.
    env = agent_env(browser, home, **{KEY_VAR: "scripted-not-a-key"})
    env.pop("CODEX_HOME", None)
    env.pop("OPENAI_API_KEY", None)
    return env


async def _codex(env: dict[str, str], project: Path, prompt: str) -> tuple[int, str]:
    return await run_agent(
        [str(CODEX), "exec", "--skip-git-repo-check", "--json", prompt], env, project
    )


async def test_codex_drives_the_chain_after_pair_client(
    trusted: ThrowawayBrowser, context: BrowserContext, site: str
) -> None:
    browser = trusted
    installed(CODEX)
    home = browser.root / "codex-home"
    project = home / "project"
    project.mkdir(parents=True)
    (home / ".codex").mkdir()
    env = _codex_env(browser, home)

    before = unpaired_script()
    tab: dict[str, Any] = {}
    after = Script(read_site_steps(site, tab))

    with scripted_responses_api(before) as api:
        (home / ".codex" / "config.toml").write_text(_codex_config(api))
        status, out = await _codex(env, project, "Check the tabwarden bridge.")
        assert_script_ran(before, out)

    shown = pair_agent(env, "codex")
    assert "codex" in shown, shown

    with scripted_responses_api(after) as api:
        (home / ".codex" / "config.toml").write_text(_codex_config(api))
        status, out = await _codex(env, project, "Read the test site.")
        assert_script_ran(after, out)
        assert status == 0, out[-3000:]
