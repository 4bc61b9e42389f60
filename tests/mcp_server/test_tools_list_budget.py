"""What ``tools/list`` costs a client, measured where it pays: the JSON-RPC line ``tabwarden mcp``
writes on stdio (docs/adr/0012). The default list must fit ``BUDGET_BYTES`` (the best peer's
size when this budget was set); ``--caps`` lists the opt-in families beside it (``--caps all``:
every tool); a tool outside the list is not listed, and a call to it answers
``tool_not_enabled`` naming the ``--caps`` that lists it. ``tabwarden mcp --help`` teaches every
family and each of its tools."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tabwarden.cli.entry import CAPS_NOTES
from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import BY_NAME
from tabwarden.mcp_server.catalogue.published import PROFILES, enabled_tools
from tabwarden.mcp_server.server import build_server
from tests.fakes import FakeBrowser, host_env, tool_error
from tests.fixtures import pair_terminal_call, paired_guard
from tests.mcp_server.stdio_session import listed_names, tools_list_line
from tests.pty_cli import spawn_cli

#: The most bytes the default ``tools/list`` line may take (chrome-devtools-mcp's 30 kB; its
#: 32 tools against @playwright/mcp's 21 kB for 25, measured when the budget was set).
BUDGET_BYTES = 30_000


def test_the_default_tools_list_fits_the_budget(tmp_path: Path) -> None:
    line = tools_list_line(tmp_path)
    assert len(line) <= BUDGET_BYTES, f"tools/list is {len(line)} bytes, over {BUDGET_BYTES}"
    assert listed_names(line) == enabled_tools(BY_NAME)
    hidden = {tool for tools in PROFILES.values() for tool in tools}
    assert hidden and not hidden & listed_names(line)
    # what the agents' flows use is in it (tests/browser/test_claude_code.py, test_codex.py)
    assert {"tab_open", "page_snapshot", "page_click", "page_screenshot"} <= listed_names(line)


def test_caps_lists_the_families_named_and_all_lists_every_tool(tmp_path: Path) -> None:
    default = tools_list_line(tmp_path)
    with_input = tools_list_line(tmp_path, "--caps", "input,files")
    assert listed_names(with_input) == listed_names(default) | set(PROFILES["input"]) | set(
        PROFILES["files"]
    )
    every = tools_list_line(tmp_path, "--caps", "all")
    assert listed_names(every) == set(BY_NAME)
    assert len(every) > len(with_input) > len(default)


def test_a_tool_outside_the_list_answers_tool_not_enabled_naming_its_caps(
    runtime_dir: Path,
) -> None:
    bridge = BridgeClient(label="caps", env={"TABWARDEN_RUNTIME_DIR": str(runtime_dir)})
    server = build_server(bridge, paired_guard(), caps=("files",))

    async def scenario() -> None:
        async with Client(server, raise_exceptions=True) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert "page_pdf" in listed and "page_drag" not in listed
            result = await client.call_tool("page_drag", {"tabId": 1, "to": {"x": 1, "y": 1}})
            error = tool_error(result)
            assert error is not None and error["code"] == "tool_not_enabled", result
            assert "`tabwarden mcp --caps input`" in error["message"]
            assert "--caps" in error["hint"]
            assert error["retry"] == "safe"

    asyncio.run(scenario())


@pytest.mark.parametrize("family", sorted(PROFILES))
def test_mcp_help_names_each_family_and_its_tools(family: str) -> None:
    help_text = subprocess.run(  # noqa: S603 (this interpreter, our own command)
        [sys.executable, "-m", "tabwarden", "mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "--caps" in help_text
    row = next(line for line in CAPS_NOTES.splitlines() if line.strip().startswith(family + " "))
    assert row in help_text
    assert [t.strip() for t in row.split(None, 1)[1].split(",")] == list(PROFILES[family])


def test_an_unknown_family_is_a_usage_error_naming_the_families() -> None:
    proc = subprocess.run(  # noqa: S603 (this interpreter, our own command)
        [sys.executable, "-m", "tabwarden", "mcp", "--caps", "everything"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "no tool family everything" in proc.stderr
    assert all(family in proc.stderr for family in [*PROFILES, "all"])


@pytest.fixture
def browser(runtime_dir: Path) -> Iterator[FakeBrowser]:
    fake = FakeBrowser(runtime_dir, attested=True)
    try:
        fake.wait_socket()
        fake.hello()
        yield fake
    finally:
        fake.close()


def test_tabwarden_call_at_a_terminal_reaches_a_tool_outside_the_default_list(
    browser: FakeBrowser,
) -> None:
    """``tabwarden tools`` lists every tool, so ``tabwarden call`` serves every one: a tool of
    an opt-in family is relayed (here the fake extension refuses it), never tool_not_enabled."""
    assert "page_pdf" in PROFILES["files"]  # outside the default list
    relayed: list[dict[str, Any]] = []

    def refuse() -> None:
        while (request := browser.receive())["type"] != "request":
            pass
        relayed.append(request)
        error = {"code": "policy_denied", "message": "off in this test"}
        browser.send({"type": "reply", "id": request["id"], "ok": False, "error": error})

    pair_terminal_call(browser.runtime.parent / "config", host_env(browser.runtime))
    answering = threading.Thread(target=refuse, daemon=True)
    answering.start()
    call = spawn_cli(host_env(browser.runtime), "call", "page_pdf", "tabId=7")
    status, output = call.finish()
    answering.join(30)
    assert [r["action"] for r in relayed] == ["page_pdf"], output
    assert b"policy_denied" in output and b"tool_not_enabled" not in output
    assert status != 0
