"""Session identity on hop 2 (host/sessions.py, host/bridge.py): a session is one MCP server
process, named by the host from its own measurement; it survives reconnects and ends when the
process exits (``session_end``); the extension's sweep (``sessions_alive``) finds sessions that
ended while no host watched; only a terminal connection may list or close every session's tabs.
Real host process, fake extension on its stdio, real client processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tabwarden.host.sessions import (
    TERMINAL_SESSION,
    measure_session,
    parse_session,
    session_alive,
    session_name,
)
from tabwarden.mcp_server.bridge_client import BridgeError
from tabwarden.trust import store
from tests.fakes import FakeBrowser, connected_client, host_env
from tests.fixtures import (
    config_of,
    host_call,
    nothing_relayed,
    pair_in_process_client,
    pair_this_process,
    paired_host,
    played,
    refused,
)

#: An MCP server stand-in: its own process, two bridge connections one after the other (a
#: dropped socket, a reconnect), one tab_list on each, then it waits for a line and exits.
CLIENT = """
import asyncio, sys
from tabwarden.mcp_server.bridge_client import BridgeClient

async def main():
    for _ in range(2):
        client = BridgeClient(label="test")
        for _ in range(3000):
            if (await client.status()).extension_connected:
                break
            await asyncio.sleep(0.01)
        await client.call("tab_list")
        await client.close()
        print("called", flush=True)

asyncio.run(main())
sys.stdin.readline()
"""


def _spawn_client(runtime: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLIENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=host_env(runtime),
    )


def _answer_tab_list(browser: FakeBrowser) -> dict[str, Any]:
    request = browser.receive()
    assert request["type"] == "request" and request["action"] == "tab_list", request
    browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})
    return request


@pytest.mark.promise("H4-24")
def test_a_session_is_named_by_its_process_and_nothing_else() -> None:
    one = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    two = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    try:
        name = measure_session(one.pid)
        assert name == measure_session(one.pid)  # the same process: the same name, every time
        assert name != measure_session(two.pid)  # another process: another name
        assert parse_session(name) == one.pid and session_alive(name)
        # The same PID started at another time (a recycled PID) is another session.
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        assert session_name(boot_id=boot, pid=one.pid, start=1) != name
        assert not session_alive(session_name(boot_id=boot, pid=one.pid, start=1))
    finally:
        for proc in (one, two):
            proc.communicate(b"\n", timeout=30)
    assert not session_alive(name)  # the process exited
    for bad in ("s-1234abcd", "s-0-" + "0" * 20, TERMINAL_SESSION, "s-12-" + "g" * 20, ""):
        assert parse_session(bad) is None and not session_alive(bad)


def test_a_session_survives_reconnects_and_ends_when_its_process_exits(
    fake_browser: FakeBrowser,
) -> None:
    pair_this_process(config_of(fake_browser))  # the client of our child server: us
    fake_browser.wait_socket()
    fake_browser.hello()
    client = _spawn_client(fake_browser.runtime)
    try:
        first = _answer_tab_list(fake_browser)
        assert first["session"] == measure_session(client.pid)
        # The first connection closed and a second one came: same process, same session, and
        # no session_end in between (the next message is the second request).
        second = _answer_tab_list(fake_browser)
        assert second["session"] == first["session"]
        assert client.stdout is not None
        assert client.stdout.readline() == "called\n"
        assert client.stdout.readline() == "called\n"
        client.communicate("\n", timeout=30)  # the MCP server exits
        end = fake_browser.receive()
        assert end == {"type": "session_end", "session": first["session"], "closeTabs": False}
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()


def test_sessions_alive_names_the_sessions_whose_process_is_gone(
    fake_browser: FakeBrowser,
) -> None:
    paired_host(fake_browser)
    gone = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    dead = measure_session(gone.pid)
    gone.communicate(b"\n", timeout=30)
    live = measure_session(os.getpid())
    reply = host_call(
        fake_browser, "sessions_alive", {"sessions": [live, dead, "s-9f2c01ab", live]}
    )
    assert reply["ok"] is True, reply
    assert reply["result"] == {"gone": [dead, "s-9f2c01ab"], "closeTabs": False}
    # Turning closeTabsOnSessionEnd on is a narrowing: free, and the sweep then says so.
    restricted = host_call(
        fake_browser, "policy_restrict", {"key": "closeTabsOnSessionEnd", "value": True}
    )
    assert restricted["ok"] is True, restricted
    reply = host_call(fake_browser, "sessions_alive", {"sessions": [dead]})
    assert reply["result"] == {"gone": [dead], "closeTabs": True}
    refused(host_call(fake_browser, "sessions_alive", {"sessions": "s-1"}), "bad_request")


@pytest.mark.promise("H4-25")
def test_only_a_terminal_may_ask_for_every_sessions_tabs(fake_browser: FakeBrowser) -> None:
    """An MCP server asking for the agent tabs of every session (or closing other sessions'
    orphans) is told the action does not exist, and nothing reaches the extension; the
    terminal's request is relayed under the reserved session name, never an MCP one."""
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        agent = await connected_client(fake_browser.runtime)
        for action in ("agent_tabs", "agent_tabs_close"):
            with pytest.raises(BridgeError) as caught:
                await agent.call(action)
            assert caught.value.code == "unknown_action"
        await asyncio.to_thread(nothing_relayed, fake_browser)
        await agent.close()

        terminal = await connected_client(fake_browser.runtime, "cli")
        seen: list[dict[str, Any]] = []

        def play() -> None:
            request = fake_browser.receive()
            seen.append(request)
            fake_browser.send(
                {"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}}
            )

        thread = threading.Thread(target=play, daemon=True)
        thread.start()
        assert await terminal.call("agent_tabs") == {"tabs": []}
        thread.join(30)
        [request] = seen
        assert request["action"] == "agent_tabs" and request["session"] == TERMINAL_SESSION
        # Anything else from a terminal is refused, as before: it does not drive the browser.
        with pytest.raises(BridgeError) as caught:
            await terminal.call("tab_list")
        assert caught.value.code == "client_not_paired"
        await terminal.close()
        await asyncio.to_thread(nothing_relayed, fake_browser)

    asyncio.run(asyncio.wait_for(scenario(), 120))


@pytest.mark.promise("TR-11")
def test_a_terminal_connection_outlives_the_record_moving_and_a_revoked_client_does_not(
    fake_browser: FakeBrowser,
) -> None:
    """The host's trust watch cuts what the record no longer pairs as its epoch moves. A
    terminal's connection is held by no pairing (it was attested as our own CLI), so a change
    while it waits (a policy written as `tabwarden policy set` waits for its tap) must not cut
    it; a revoked MCP client beside it is cut in that same sweep."""
    config = config_of(fake_browser)
    pair_in_process_client(config)
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        agent = await connected_client(fake_browser.runtime)
        terminal = await connected_client(fake_browser.runtime, "cli")
        held = terminal._stream
        store.revoke(config / "trust.json", "client", "pytest", int(time.time()))  # epoch +1
        await asyncio.to_thread(fake_browser.wait_stderr, "cut: this client was revoked")
        # The sweep is one pass of the host's loop: a request it answers now comes after any
        # cut that pass made, and must come on the very connection the terminal held.
        call = asyncio.ensure_future(terminal.call("agent_tabs"))
        request = await played(call, fake_browser.receive)
        assert request["action"] == "agent_tabs", request
        fake_browser.send(
            {"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}}
        )
        assert await call == {"tabs": []}
        assert terminal._stream is held
        assert "may drive the browser" not in fake_browser.stderr
        await terminal.close()
        await agent.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_a_live_session_the_sweep_asked_about_is_ended_when_its_process_exits(
    fake_browser: FakeBrowser,
) -> None:
    """A host that started after the MCP server last connected (the previous host was killed)
    still learns when that server exits: the sweep's live sessions are watched like its own."""
    paired_host(fake_browser)
    server = subprocess.Popen([sys.executable, "-c", "input()"], stdin=subprocess.PIPE)
    try:
        name = measure_session(server.pid)
        reply = host_call(fake_browser, "sessions_alive", {"sessions": [name]})
        assert reply["result"] == {"gone": [], "closeTabs": False}
    finally:
        server.communicate(b"\n", timeout=30)
    assert fake_browser.receive() == {"type": "session_end", "session": name, "closeTabs": False}
