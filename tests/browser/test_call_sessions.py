"""``tabwarden call --session NAME`` from a real terminal into real headless Chromium: the tab one
call opens is the next call's; ``tabwarden tabs`` lists the session; ``--close``, an idle timeout
and a killed keeper each end it, release its tabs (orphaned) and the next call of that name says
``session_gone``; a process that is not our ``tabwarden call`` is refused by the keeper before a
byte of the handshake, and nothing changes (ADR 0015)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.bridge.spawner import recent_spawners
from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.paths import runtime_dir
from tabwarden.trust import store
from tabwarden.trust.gate import host_key_store
from tests.browser.harness import extension_connected, mcp_client
from tests.deadline import until
from tests.pty_cli import spawn_cli

pytestmark = pytest.mark.browser


async def _cli(browser: ThrowawayBrowser, *args: str) -> tuple[int, bytes]:
    """`tabwarden ARGS` typed at a real terminal: its exit status and what it printed."""
    return await asyncio.to_thread(spawn_cli(browser.env, *args).finish, 120)


def _json(output: bytes) -> dict[str, Any]:
    text = output.decode().replace("\r\n", "\n")
    parsed: dict[str, Any] = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return parsed


def _sessions(browser: ThrowawayBrowser) -> Path:
    return runtime_dir(browser.env) / "sessions"


def _keeper_pid(browser: ThrowawayBrowser, name: str) -> int:
    info = json.loads((_sessions(browser) / f"{name}.json").read_text())
    pid: int = info["pid"]
    return pid


@pytest.fixture
def paired_terminal(trusted: ThrowawayBrowser) -> Iterator[ThrowawayBrowser]:
    """The browser started as a person starts it, with `python -m tabwarden` (what `tabwarden
    call` and its session keeper are measured as) paired; every keeper still running at the end
    is stopped."""
    yield trusted
    directory = _sessions(trusted)
    for info in directory.glob("*.json") if directory.exists() else []:
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(json.loads(info.read_text())["pid"], signal.SIGTERM)


async def _pair_terminal(browser: ThrowawayBrowser, site: str) -> None:
    browser.start("about:blank")
    async with mcp_client(browser) as agent:  # this test process is the paired client
        await extension_connected(agent, timeout_s=90)
    status, output = await _cli(browser, "call", "tab_open", f"url={site}/")
    assert status == 1 and b"error[client_not_paired]" in output, output
    seen = next(s for s in recent_spawners(browser.config) if "-m tabwarden" in s.path)
    key = host_key_store(browser.config, "file").load()
    assert key is not None
    store.add_client(browser.config / "trust.json", key, "terminal", seen.path, seen.sha256, 1)


async def _tabs(browser: ThrowawayBrowser) -> dict[str, Any]:
    status, output = await _cli(browser, "tabs", "--json")
    assert status == 0, output
    return _json(output)


def _tab(listing: dict[str, Any], tab_id: int) -> dict[str, Any]:
    return next(t for t in listing["tabs"] if t.get("id") == tab_id)


@pytest.mark.promise("H1-14")
async def test_a_session_keeps_its_tabs_across_calls_and_close_releases_them(
    paired_terminal: ThrowawayBrowser, site: str
) -> None:
    browser = paired_terminal
    await _pair_terminal(browser, site)

    status, output = await _cli(browser, "call", "--session", "work", "tab_open", f"url={site}/")
    assert status == 0, output
    tab = _json(output)["tab"]
    assert tab["title"] == "form"

    status, output = await _cli(
        browser, "call", "--session", "work", "page_text", f"tabId={tab['id']}"
    )
    assert status == 0, output  # not tab_not_owned: the same session
    assert "Sign in" in output.decode(), output

    listing = await _tabs(browser)
    [live] = [s for s in listing["terminalSessions"] if s["name"] == "work"]
    assert live["idleTimeoutS"] == 600 and live["session"]
    mine = _tab(listing, tab["id"])
    assert mine["session"] == live["session"] and mine.get("orphaned") is not True
    status, output = await _cli(browser, "tabs")
    assert status == 0 and b"terminal session work" in output and b"--session work" in output

    status, output = await _cli(browser, "call", "--session", "work", "--close")
    assert status == 0 and b"closed" in output, output
    # The keeper answers "closed", then stops its server and removes its socket.
    socket_path = _sessions(browser) / "work.sock"
    await until("the closed session's socket is gone", lambda: not socket_path.exists())

    async def released() -> bool:
        return _tab(await _tabs(browser), tab["id"]).get("orphaned") is True

    await until("the closed session's tab is orphaned", released, timeout_s=60, interval_s=1)
    assert (await _tabs(browser))["terminalSessions"] == []
    # The name starts a new session now, and the old tab is not its.
    status, output = await _cli(
        browser, "call", "--session", "work", "page_text", f"tabId={tab['id']}"
    )
    assert status == 1 and b"error[tab_not_owned]" in output, output


@pytest.mark.promise("H1-14")
async def test_only_our_own_call_can_drive_a_session(
    paired_terminal: ThrowawayBrowser, site: str
) -> None:
    browser = paired_terminal
    await _pair_terminal(browser, site)
    status, output = await _cli(browser, "call", "--session", "s1", "tab_open", f"url={site}/")
    assert status == 0, output
    tab = _json(output)["tab"]
    before = await _tabs(browser)

    # This test process has our UID and can read the session's secret, but it is not
    # `python -I -m tabwarden call`: the keeper closes the connection before its challenge.
    directory = _sessions(browser)
    assert len((directory / "s1.secret").read_bytes()) == 32
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(str(directory / "s1.sock"))
        request = json.dumps(
            {"type": "call", "tool": "tab_close", "arguments": {"tabId": tab["id"]}}
        )
        with contextlib.suppress(OSError):
            sock.sendall(len(request).to_bytes(4, "big") + request.encode())
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(4096):
                received += chunk
    assert received == b"", received  # not even the challenge

    after = await _tabs(browser)
    assert _tab(after, tab["id"]) == _tab(before, tab["id"])  # still there, still the session's
    status, output = await _cli(
        browser, "call", "--session", "s1", "page_text", f"tabId={tab['id']}"
    )
    assert status == 0, output


@pytest.mark.promise("H1-14")
async def test_an_idle_or_killed_session_is_gone_and_its_tabs_released(
    paired_terminal: ThrowawayBrowser, site: str
) -> None:
    browser = paired_terminal
    await _pair_terminal(browser, site)
    directory = _sessions(browser)

    # Idle: a short timeout, waited on as the keeper's own record that it ended.
    status, output = await _cli(
        browser, "call", "--session", "idle", "--idle-timeout", "3", "tab_open", f"url={site}/"
    )
    assert status == 0, output
    idle_tab = _json(output)["tab"]
    await until("the idle session ended", (directory / "idle.ended").exists, timeout_s=90)
    status, output = await _cli(
        browser, "call", "--session", "idle", "page_text", f"tabId={idle_tab['id']}"
    )
    assert status == 1 and b"error[session_gone]" in output and b"(idle)" in output, output
    assert b"hint:" in output

    # Killed: the keeper dies without a word; the next call says so, its tab is released.
    status, output = await _cli(browser, "call", "--session", "crash", "tab_open", f"url={site}/")
    assert status == 0, output
    crash_tab = _json(output)["tab"]
    os.kill(_keeper_pid(browser, "crash"), signal.SIGKILL)
    status, output = await _cli(
        browser, "call", "--session", "crash", "page_text", f"tabId={crash_tab['id']}"
    )
    assert status == 1 and b"error[session_gone]" in output and b"keeper stopped" in output

    async def both_released() -> bool:
        listing = await _tabs(browser)
        return all(_tab(listing, t["id"]).get("orphaned") is True for t in (idle_tab, crash_tab))

    await until("both ended sessions' tabs are orphaned", both_released, timeout_s=60, interval_s=1)
