"""Every audit line of a `tabwarden mcp` names its session: two real servers (one labelled as
`tabwarden call --session NAME`'s keeper labels it, one whose label tries to forge lines) against
the real, attested host, their calls read back from the real audit log."""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tabwarden.mcp_server.server import (
    MAX_SESSION_LABEL,
    SESSION_LABEL_ENV,
    sanitise_session_label,
    session_fields,
)
from tests.deadline import until
from tests.fakes import FakeBrowser, host_env, tool_error
from tests.fixtures import pair_this_process

GUARD = 60.0  # hang guard only

#: A label that tries to end its line and write one of its own, clear the terminal, reverse the
#: text around it and run far past any sane length.
FORGING = (
    'x"}\n{"ts": 1, "event": "pair", "decision": "allow"}\r\x1b[2J\u202eevil\u200b' + "y" * 500
)


@pytest.mark.promise("H4-81")
def test_a_label_keeps_no_control_or_format_character_and_no_more_than_the_cap() -> None:
    assert sanitise_session_label("work") == "work"
    assert sanitise_session_label(None) is None
    assert sanitise_session_label("\n\t\x00\u202e") is None
    clean = sanitise_session_label(FORGING)
    assert clean is not None
    assert len(clean) == MAX_SESSION_LABEL
    assert clean.startswith('x"} {"ts": 1, "event": "pair", "decision": "allow"} [2Jevil')
    assert all(ch.isprintable() for ch in clean)
    assert session_fields({SESSION_LABEL_ENV: "a\nb"}, pid=7) == {"session": "a b", "sessionPid": 7}
    assert session_fields({}, pid=7) == {"session": None, "sessionPid": 7}


def _answer_tabs(browser: FakeBrowser, count: int) -> threading.Thread:
    def run() -> None:
        for _ in range(count):
            request = browser.receive()
            browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _mcp(runtime: Path, label: str | None, errlog: Any) -> Client:
    env = host_env(runtime)
    env.pop(SESSION_LABEL_ENV, None)
    if label is not None:
        env[SESSION_LABEL_ENV] = label
    params = StdioServerParameters(command=sys.executable, args=["-m", "tabwarden", "mcp"], env=env)
    return Client(stdio_client(params, errlog=errlog))


def _audit(runtime: Path) -> list[dict[str, Any]]:
    done = subprocess.run(  # noqa: S603 (this interpreter, our own CLI)
        [sys.executable, "-m", "tabwarden", "audit", "--json"],
        capture_output=True, text=True, env=host_env(runtime), timeout=60, check=True,
    )  # fmt: skip
    entries: list[dict[str, Any]] = json.loads(done.stdout)
    return entries


@pytest.mark.promise("H4-81")
def test_two_sessions_calls_are_audited_each_with_its_own_label(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    runtime = attested_browser.runtime
    pair_this_process(runtime.parent / "config")  # both servers' spawner: this process

    async def connected(client: Client) -> bool | None:
        result = await client.call_tool("bridge_status", {})
        return (
            True
            if not result.is_error and result.structured_content["extensionConnected"]
            else None
        )

    async def scenario() -> None:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(runtime, "work", errlog) as work, _mcp(runtime, FORGING, errlog) as odd:
                for client in (work, odd):
                    await until(
                        "the server reaches the extension", functools.partial(connected, client)
                    )
                    answerer = _answer_tabs(attested_browser, 1)
                    assert tool_error(await client.call_tool("tab_list", {})) is None
                    answerer.join(5)

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    calls = [
        e for e in _audit(runtime) if e["event"] == "tool_call" and e.get("tool") == "tab_list"
    ]
    assert [c["session"] for c in calls] == ["work", sanitise_session_label(FORGING)], calls
    pids = [c["sessionPid"] for c in calls]
    assert len(set(pids)) == 2 and all(type(p) is int and p > 0 for p in pids), calls
