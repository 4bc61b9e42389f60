"""The MCP server's contract with clients: schemas, annotations, structured results, and error
results carrying a stable code and hint. In-process (the SDK's Client) against a real host
process; the real stdio transport is covered in tests/browser and by `tabwarden demo`."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, Tool, ToolAnnotations

from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.catalogue import BY_NAME
from tabwarden.mcp_server.server import build_server
from tests.fakes import FakeBrowser, tool_error, wait_until_extension_connected
from tests.fixtures import config_of, pair_in_process_client, paired_guard


def _server(runtime: Path, label: str = "test") -> MCPServer[Any]:
    bridge = BridgeClient(label=label, env={"TABWARDEN_RUNTIME_DIR": str(runtime)})
    return build_server(bridge, paired_guard())


def _hints(tool: Tool) -> ToolAnnotations:
    assert tool.annotations is not None, f"{tool.name} declares no annotations"
    return tool.annotations


def _text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def _structured(result: CallToolResult) -> dict[str, Any]:
    content: dict[str, Any] | None = result.structured_content
    assert content is not None, result
    return content


def _error(result: CallToolResult) -> dict[str, Any]:
    error = tool_error(result)
    assert error is not None, "the call succeeded"
    return error


def test_tools_declare_schemas_and_annotations(runtime_dir: Path) -> None:
    async def scenario() -> None:
        async with Client(_server(runtime_dir), raise_exceptions=True) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == set(BY_NAME)  # the list itself: tests/mcp_server/tools_list.json
            for tool in tools.values():
                assert tool.annotations is not None
                assert tool.output_schema is not None and tool.output_schema["type"] == "object"
                assert tool.input_schema["type"] == "object"
            for name in ("tab_list", "bridge_status", "page_text"):
                assert _hints(tools[name]).read_only_hint is True
            for name in ("tab_close", "tab_close_all", "page_eval", "page_upload"):
                assert _hints(tools[name]).destructive_hint is True
            for name in ("page_click", "page_fill", "page_get_state"):
                props = tools[name].input_schema["properties"]
                assert {"ref", "selector", "text", "xpath", "index"} <= set(props)
            assert tools["page_fill"].input_schema["required"] == ["tabId", "value"]
            assert tools["page_eval"].input_schema["required"] == ["tabId", "code"]
            assert tools["page_text"].input_schema["required"] == ["tabId"]
            assert tools["page_navigate"].input_schema["required"] == ["tabId", "url"]
            # left out when true, the specification's default (docs/adr/0012)
            assert _hints(tools["tab_open"]).open_world_hint is None
            assert _hints(tools["bridge_status"]).open_world_hint is False
            # a result's full schema is the server's to hold (docs/adr/0012): clients see an object
            assert tools["tab_list"].output_schema == {"type": "object"}

    asyncio.run(scenario())


@pytest.mark.promise("EV-02")
def test_no_host_gives_coded_error_not_a_hang(runtime_dir: Path) -> None:
    async def scenario() -> None:
        async with Client(_server(runtime_dir), raise_exceptions=True) as client:
            result = await client.call_tool("tab_list", {})
            assert result.is_error
            error = _error(result)
            assert error["code"] == "extension_not_connected"
            assert "tabwarden install" in error["hint"]
            assert _text(result).startswith("extension_not_connected: ")
            status = _structured(await client.call_tool("bridge_status", {}))
            recent = status.pop("recent")
            last_error = status.pop("lastError")
            assert [(c["tool"], c["ok"], c["code"]) for c in recent] == [
                ("tab_list", False, "extension_not_connected")
            ]
            assert isinstance(recent[0]["ms"], int) and recent[0]["ms"] >= 0
            assert last_error["tool"] == "tab_list"
            assert last_error["code"] == "extension_not_connected"
            # Which running browser cannot start a host depends on the machine's processes
            # (tests/cli/test_running_browsers.py holds what it says).
            assert isinstance(status.pop("hostProblems"), list)
            assert status == {
                "killed": False,
                "hostReachable": False,
                "extensionConnected": False,
                "extensionVersion": None,
                "protocolVersion": None,
                "browser": None,
                "socket": str(runtime_dir / "test.sock"),
                "lastHandshakeError": None,
                # Never seen: no last-seen record (tabwarden/bridge/away.py), so nothing is "away".
                "connectedSince": None,
                "lastDisconnectAt": None,
                "lastDisconnectReason": None,
                "extensionAway": False,
                "expectedBackWithinS": None,
            }

    asyncio.run(scenario())


async def test_a_call_no_host_answers_names_the_install_command_of_the_browser_running(
    runtime_dir: Path,
) -> None:
    """The running browsers are the command line's to read (``tabwarden mcp`` hands the reader
    in); here it reports Chromium running without our host, and a relayed call that no host
    answers says so with that browser's own command, where the hint can only say LABEL."""
    seen: list[object] = []
    command = "tabwarden install --browser chromium --manifest-dir '/p q/NativeMessagingHosts'"

    def problems(env: object) -> list[dict[str, str]]:
        seen.append(env)
        return [{"code": "host_not_installed", "browser": "chromium",
                 "cause": "no host manifest is installed for it", "command": command}]  # fmt: skip

    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime_dir)})
    server = build_server(bridge, paired_guard(), host_problems=problems)
    async with Client(server, raise_exceptions=True) as client:
        error = _error(await client.call_tool("tab_list", {}))
    assert error["code"] == "extension_not_connected"
    assert error["message"].endswith(
        f"; chromium is running, but no host manifest is installed for it: run `{command}`"
    ), error
    assert "--browser LABEL" in error["hint"]
    assert seen == [bridge.env]

    def unreadable(env: object) -> list[dict[str, str]]:
        raise PermissionError("the process table")

    server = build_server(bridge, paired_guard(), host_problems=unreadable)
    async with Client(server, raise_exceptions=True) as client:
        error = _error(await client.call_tool("tab_list", {}))
    assert error["code"] == "extension_not_connected" and "running" not in error["message"]


def test_tab_list_structured_result_through_real_host(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    tabs = [{"id": 7, "url": "http://127.0.0.1:1/", "title": "T", "active": True, "windowId": 3}]

    def answer() -> None:
        request = fake_browser.receive()
        assert request["action"] == "tab_list"
        fake_browser.send(
            {"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": tabs}}
        )

    async def scenario() -> None:
        async with Client(_server(fake_browser.runtime), raise_exceptions=True) as client:
            status: dict[str, Any] = {}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                status = _structured(await client.call_tool("bridge_status", {}))
                if status["extensionConnected"]:
                    break
                await asyncio.sleep(0.02)
            assert status["browser"] == "test" and status["protocolVersion"] == 1
            thread = threading.Thread(target=answer, daemon=True)
            thread.start()
            result = await client.call_tool("tab_list", {})
            thread.join(5)
            assert not result.is_error
            assert result.structured_content == {"tabs": tabs}

    asyncio.run(scenario())


def test_malformed_extension_reply_is_an_internal_error_not_a_crash(
    fake_browser: FakeBrowser,
) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()

    def answer() -> None:
        request = fake_browser.receive()
        fake_browser.send(
            {"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": [{"id": "x"}]}}
        )

    async def scenario() -> None:
        async with Client(_server(fake_browser.runtime), raise_exceptions=True) as client:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if _structured(await client.call_tool("bridge_status", {}))["extensionConnected"]:
                    break
                await asyncio.sleep(0.02)
            thread = threading.Thread(target=answer, daemon=True)
            thread.start()
            result = await client.call_tool("tab_list", {})
            thread.join(5)
            assert result.is_error
            assert _error(result)["code"] == "internal_error"

    asyncio.run(scenario())


def test_element_tools_need_exactly_one_way_to_name_the_element(runtime_dir: Path) -> None:
    async def scenario() -> None:
        async with Client(_server(runtime_dir), raise_exceptions=True) as client:
            for args in ({"tabId": 1}, {"tabId": 1, "ref": "@e1", "selector": "a"}):
                result = await client.call_tool("page_click", args)
                assert result.is_error and _error(result)["code"] == "bad_request"

    asyncio.run(scenario())


@pytest.mark.promise("H4-17")
def test_upload_outside_the_sandbox_is_refused_before_any_browser_call(
    runtime_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    (tmp_path / "secret").write_text("nope")
    monkeypatch.setenv("TABWARDEN_UPLOAD_DIR", str(box))

    async def scenario() -> None:
        async with Client(_server(runtime_dir), raise_exceptions=True) as client:
            result = await client.call_tool(
                "page_upload", {"tabId": 1, "path": "../secret", "selector": "input"}
            )
            assert result.is_error and _error(result)["code"] == "policy_denied"
            assert "nope" not in str(result.content)

    asyncio.run(scenario())


def test_errors_say_whether_a_retry_is_safe_for_that_tool(fake_browser: FakeBrowser) -> None:
    """A timeout on a read is safe to repeat, on an action it is not (the page may have changed);
    a person's "no" is never to be repeated without them; a refusal before acting is safe. The
    extension's replies come through the real host."""
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    answers = [
        ("page_text", "timeout"),
        ("page_click", "timeout"),
        ("page_click", "confirm_denied"),
    ]

    def answer() -> None:
        for action, code in answers:
            request = fake_browser.receive()
            assert request["action"] == action
            fake_browser.send(
                {"type": "reply", "id": request["id"], "ok": False, "error": {"code": code}}
            )

    async def scenario() -> None:
        async with Client(_server(fake_browser.runtime), raise_exceptions=True) as client:
            deadline = time.monotonic() + 30
            while not _structured(await client.call_tool("bridge_status", {}))[
                "extensionConnected"
            ]:
                assert time.monotonic() < deadline, "the extension never connected"
                await asyncio.sleep(0.02)
            thread = threading.Thread(target=answer, daemon=True)
            thread.start()
            read = await client.call_tool("page_text", {"tabId": 1})
            act = await client.call_tool("page_click", {"tabId": 1, "selector": "#go"})
            denied = await client.call_tool("page_click", {"tabId": 1, "selector": "#go"})
            thread.join(5)
            bad_args = await client.call_tool("page_click", {"tabId": 1})  # no target: nothing ran
            assert (_error(read)["code"], _error(read)["retry"]) == ("timeout", "safe")
            assert (_error(act)["code"], _error(act)["retry"]) == ("timeout", "after_check")
            assert "retry: check the page first" in _text(act)
            assert "Safe to retry" not in _text(act)
            assert (_error(denied)["code"], _error(denied)["retry"]) == ("confirm_denied", "unsafe")
            assert (_error(bad_args)["code"], _error(bad_args)["retry"]) == ("bad_request", "safe")

    asyncio.run(scenario())


@pytest.mark.promise("H4-02")
def test_a_waiting_call_reports_progress_and_an_unanswered_confirm_is_audited(
    fake_browser: FakeBrowser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the browser has not answered (a confirm window is open), the server tells a client
    that asked for progress that it still waits; when the confirmation times out the agent gets
    ``confirm_timeout`` and the audit says so. A client that gave no progress token gets none."""
    pair_in_process_client(config_of(fake_browser))
    from tabwarden.mcp_server import tools

    monkeypatch.setattr(tools, "PROGRESS_INTERVAL_SECONDS", 0.05)
    fake_browser.wait_socket()
    fake_browser.hello()
    audited: list[dict[str, Any]] = []
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)})
    server = build_server(
        bridge,
        paired_guard(audit=lambda ev, **f: audited.append({"ev": ev, **f})),
    )
    seen: list[tuple[float, str | None]] = []
    released = threading.Event()

    def answer() -> None:
        for code in ("confirm_timeout", "confirm_denied"):
            request = fake_browser.receive()
            released.wait(30)  # the person takes their time; the test says when
            released.clear()
            fake_browser.send(
                {"type": "reply", "id": request["id"], "ok": False, "error": {"code": code}}
            )

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))
        if len(seen) == 3:
            released.set()

    async def scenario() -> None:
        async with Client(server, raise_exceptions=True) as client:
            await wait_until_extension_connected(bridge.status)
            thread = threading.Thread(target=answer, daemon=True)
            thread.start()
            timed_out = await client.call_tool(
                "page_click", {"tabId": 1, "selector": "#go"}, progress_callback=on_progress
            )
            assert _error(timed_out)["code"] == "confirm_timeout"
            assert _error(timed_out)["retry"] == "unsafe"
            assert [value for value, _ in seen] == [1, 2, 3]
            assert all(m and "confirmation may be waiting" in m for _, m in seen)
            # No progress token: nothing is reported, the call still ends.
            before = len(seen)
            denied = asyncio.create_task(
                client.call_tool("page_click", {"tabId": 1, "selector": "#go"})
            )
            await asyncio.sleep(0)
            released.set()
            assert _error(await denied)["code"] == "confirm_denied"
            assert len(seen) == before
            thread.join(5)

    asyncio.run(scenario())
    outcomes = [(a["decision"], a["refusal"]) for a in audited if a["decision"] != "allowed"]
    assert outcomes == [("timed_out", "confirm_timeout"), ("denied", "confirm_denied")]
    assert all(a["tool"] == "page_click" for a in audited if a["decision"] != "allowed")
