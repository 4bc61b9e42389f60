"""bridge_status reports this session's recent calls and last error — names and outcomes, never
an argument — and answers while the kill switch is engaged, saying so, while every other tool is
refused. Real processes: the attested host with a fake extension on its stdio, the real
`tabwarden mcp` spawned by the SDK's stdio client, the real CLI engaging the kill switch."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.fakes import FakeBrowser, host_env, tool_error
from tests.fixtures import (
    answer_one_tab_list,
    nothing_relayed,
    our_interpreter,
    pair_record,
    played,
)

GUARD = 90.0  # hang guard only
SECRET = "s3cr3t-Arg-7f1c0de"


@pytest.fixture
def browser(runtime_dir: Path) -> Iterator[FakeBrowser]:
    fake = FakeBrowser(runtime_dir, attested=True)
    try:
        fake.wait_socket()
        fake.hello()
        yield fake
    finally:
        fake.close()


def _mcp(runtime: Path, errlog: Any) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tabwarden", "mcp"], env=host_env(runtime)
    )
    return Client(stdio_client(params, errlog=errlog))


async def _status(client: Any) -> dict[str, Any]:
    result = await client.call_tool("bridge_status", {})
    assert not result.is_error, result.content
    content: dict[str, Any] = result.structured_content
    return content


async def _until_connected(client: Any) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if (await _status(client))["extensionConnected"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the extension never connected")


def _refuse_next_request(browser: FakeBrowser) -> dict[str, Any]:
    """Play the extension refusing the next relayed request (page_eval is off)."""
    while (request := browser.receive())["type"] == "session_end":
        pass
    browser.send(
        {
            "type": "reply",
            "id": request["id"],
            "ok": False,
            "error": {"code": "policy_denied", "message": "page_eval is off"},
        }
    )
    return request


@pytest.mark.promise("H1-09")
def test_recent_calls_name_tools_and_outcomes_never_arguments(
    browser: FakeBrowser, tmp_path: Path
) -> None:
    runtime = browser.runtime
    pair_record(runtime.parent / "config", client_exe=our_interpreter(), label="pytest")
    relayed: list[dict[str, Any]] = []

    async def scenario() -> tuple[dict[str, Any], str]:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(runtime, errlog) as client:
                await _until_connected(client)
                listing = asyncio.create_task(client.call_tool("tab_list", {}))
                await played(listing, answer_one_tab_list, browser)
                assert not (await listing).is_error
                evaluating = asyncio.create_task(
                    client.call_tool("page_eval", {"tabId": 1, "code": f"'{SECRET}'"})
                )
                relayed.append(await played(evaluating, _refuse_next_request, browser))
                assert (tool_error(await evaluating) or {}).get("code") == "policy_denied"
                result = await client.call_tool("bridge_status", {})
                text = " ".join(getattr(c, "text", "") for c in result.content)
                return result.structured_content, text

    status, text = asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert SECRET in json.dumps(relayed)  # the argument did travel, so its absence below counts
    recent = status["recent"]
    assert [(c["tool"], c["ok"], c["code"]) for c in recent[-2:]] == [
        ("tab_list", True, None),
        ("page_eval", False, "policy_denied"),
    ]
    assert all(set(c) == {"tool", "ok", "ms", "code"} for c in recent)
    assert status["lastError"]["tool"] == "page_eval"
    assert status["lastError"]["code"] == "policy_denied"
    assert status["killed"] is False
    assert SECRET not in json.dumps(status) and SECRET not in text
    assert SECRET not in (tmp_path / "mcp.err").read_text()
    audit = runtime.parent / "config" / "audit.jsonl"
    assert not audit.exists() or SECRET not in audit.read_text()


@pytest.mark.promise("H1-09")
def test_bridge_status_answers_while_killed_and_every_other_tool_is_refused(
    browser: FakeBrowser, tmp_path: Path
) -> None:
    runtime = browser.runtime
    pair_record(runtime.parent / "config", client_exe=our_interpreter(), label="pytest")

    async def scenario() -> dict[str, Any]:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(runtime, errlog) as client:
                await _until_connected(client)
                killing = subprocess.run(  # noqa: S603 - our CLI
                    [sys.executable, "-m", "tabwarden", "kill"],
                    capture_output=True,
                    env=host_env(runtime),
                    timeout=60,
                    check=False,
                )
                assert killing.returncode == 0, killing.stderr
                for tool, args in (("tab_list", {}), ("page_text", {"tabId": 1})):
                    refused = await client.call_tool(tool, args)
                    assert (tool_error(refused) or {}).get("code") == "killed", tool
                return await _status(client)

    status = asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert status["killed"] is True
    assert status["hostReachable"] is True  # a diagnostic: it still says what it sees
    assert [(c["tool"], c["code"]) for c in status["recent"][-2:]] == [
        ("tab_list", "killed"),
        ("page_text", "killed"),
    ]
    assert status["lastError"]["code"] == "killed"
    nothing_relayed(browser)  # no page request reached the browser after the kill
