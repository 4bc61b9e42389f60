"""The MCP server's bridge client retries a lost transport with the same command id, within the
call's deadline (mcp_server/bridge_client.py "Exactly once across transport failures").

A real host process (``FakeBrowser`` plays Chrome on its pipes), real sockets; the transport is
broken from outside: the host's accepted connection shut down (``tests.transport``), or the host
SIGKILLed and a new one started, with a new run secret, as Chrome does when the extension
reconnects.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError
from tabwarden.mcp_server.server import build_server
from tests.fakes import FakeBrowser, wait_until_extension_connected
from tests.fixtures import config_of, pair_in_process_client, paired_guard
from tests.transport import drop_bridge_connections


def _client(runtime: Path) -> BridgeClient:
    return BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime)})


def _next_request(browser: FakeBrowser) -> dict[str, Any]:
    """The next request the host relays (skipping its other messages, e.g. ``session_end``)."""
    while (message := browser.receive())["type"] != "request":
        pass
    return message


def _reply(request: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"type": "reply", "id": request["id"], "ok": True, "result": result}


def test_a_dropped_socket_is_retried_with_the_same_command_id(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    sock = fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        client = _client(fake_browser.runtime)
        await client.ensure_connected()
        await wait_until_extension_connected(client.status)
        call = asyncio.create_task(
            client.call("page_click", {"tabId": 1, "selector": "#go"}, timeout=60)
        )
        first = await asyncio.to_thread(_next_request, fake_browser)
        assert await asyncio.to_thread(drop_bridge_connections, fake_browser.proc.pid, sock) == 1
        second = await asyncio.to_thread(
            _next_request, fake_browser
        )  # the retry, on a new connection
        assert second["command"] == {"id": first["command"]["id"], "retry": True, "readOnly": False}
        assert first["command"]["retry"] is False
        assert second["id"] != first["id"] and second["args"] == first["args"]
        fake_browser.send(_reply(first, {"clicked": "late, for a connection that is gone"}))
        fake_browser.send(_reply(second, {"clicked": True}))
        assert await call == {"clicked": True}
        await client.close()

    asyncio.run(scenario())


def test_a_killed_host_is_replaced_and_the_call_retried_there(runtime_dir: Path) -> None:
    pair_in_process_client(runtime_dir.parent / "config")
    old = FakeBrowser(runtime_dir)
    new: FakeBrowser | None = None
    try:
        old.wait_socket()
        old.hello()

        async def scenario() -> FakeBrowser:
            client = _client(runtime_dir)
            await client.ensure_connected()
            await wait_until_extension_connected(client.status)
            call = asyncio.create_task(client.call("page_fill", {"tabId": 1}, command="c" * 22))
            first = await asyncio.to_thread(_next_request, old)
            old.proc.send_signal(signal.SIGKILL)
            await asyncio.to_thread(old.proc.wait)
            # Chrome starts a new host (new run secret) when the extension reconnects.
            replacement = FakeBrowser(runtime_dir)
            await asyncio.to_thread(replacement.wait_socket)
            await asyncio.to_thread(replacement.hello)
            retried = await asyncio.to_thread(_next_request, replacement)
            assert retried["command"] == {"id": "c" * 22, "retry": True, "readOnly": False}
            assert first["command"]["id"] == "c" * 22
            replacement.send(_reply(retried, {"filled": True}))
            assert await call == {"filled": True}
            await client.close()
            return replacement

        new = asyncio.run(scenario())
    finally:
        old.close()
        if new is not None:
            new.close()


@pytest.mark.promise("H4-21")
def test_a_host_that_never_comes_back_ends_the_call_at_its_deadline(
    fake_browser: FakeBrowser,
) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        client = _client(fake_browser.runtime)
        await client.ensure_connected()
        await wait_until_extension_connected(client.status)
        call = asyncio.create_task(client.call("page_click", {"tabId": 1}, timeout=3))
        await asyncio.to_thread(_next_request, fake_browser)
        fake_browser.proc.send_signal(signal.SIGKILL)
        with pytest.raises(BridgeError) as lost:
            await asyncio.wait_for(call, 60)  # a hang guard: the call's own deadline is 3 s
        assert lost.value.code == "command_lost"
        await client.close()

    asyncio.run(scenario())


@pytest.mark.promise("H4-22")
def test_a_malformed_command_is_refused_by_the_host_before_the_browser(
    fake_browser: FakeBrowser,
) -> None:
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        client = _client(fake_browser.runtime)
        await client.ensure_connected()
        await wait_until_extension_connected(client.status)
        with pytest.raises(BridgeError) as bad:
            await client.call("tab_list", command="short")
        assert bad.value.code == "bad_request"
        fake_browser.send({"type": "hello", "protocol": 1, "extensionVersion": "probe"})
        # The first thing the browser sees after the refusal is the answer to this probe.
        assert (await asyncio.to_thread(fake_browser.receive))["type"] == "welcome"
        await client.close()

    asyncio.run(scenario())


def test_each_tool_call_has_one_command_id_kept_across_its_retries(
    fake_browser: FakeBrowser,
) -> None:
    """Through the MCP server's own tool path (tools.py → BridgeClient.call): one id per tool
    call, the same on its retry, a new one for the next call; readOnly from the catalogue."""
    pair_in_process_client(config_of(fake_browser))
    sock = fake_browser.wait_socket()
    fake_browser.hello()
    bridge = _client(fake_browser.runtime)
    server = build_server(bridge, paired_guard())

    async def scenario() -> None:
        async with Client(server, raise_exceptions=True) as client:
            await wait_until_extension_connected(bridge.status)
            click = asyncio.create_task(
                client.call_tool("page_click", {"tabId": 3, "selector": "#go"})
            )
            first = await asyncio.to_thread(_next_request, fake_browser)
            await asyncio.to_thread(drop_bridge_connections, fake_browser.proc.pid, sock)
            retried = await asyncio.to_thread(_next_request, fake_browser)
            result = {"clicked": True, "navigated": False, "url": "http://127.0.0.1:1/"}
            fake_browser.send(_reply(retried, result))
            assert not (await click).is_error
            assert retried["command"]["id"] == first["command"]["id"]
            assert (first["command"]["retry"], retried["command"]["retry"]) == (False, True)
            assert first["command"]["readOnly"] is False

            read = asyncio.create_task(client.call_tool("page_text", {"tabId": 3}))
            text_request = await asyncio.to_thread(_next_request, fake_browser)
            text = {"text": "t", "nextOffset": None, "totalChars": 1, "url": "u", "title": "t"}
            fake_browser.send(_reply(text_request, text))
            assert not (await read).is_error
            assert text_request["command"]["id"] != first["command"]["id"]
            assert text_request["command"]["readOnly"] is True
            assert text_request["command"]["retry"] is False

    asyncio.run(scenario())
