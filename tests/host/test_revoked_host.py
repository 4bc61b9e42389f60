"""A revoked client is told it was revoked, at both hops, and nothing reaches the browser.

Real processes: a person pairs this test process as the client (``pair_this_process``), it is
served, the person revokes it with the real CLI, and its next call answers ``client_revoked``
with the label and the one way back; a client nobody ever paired is still ``client_not_paired``
and is told nothing about the revoked one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError
from tests.fakes import (
    BRIDGE_CLIENT,
    FakeBrowser,
    host_env,
    tool_error,
    wait_until_extension_connected,
)
from tests.fixtures import (
    answer_one_tab_list,
    config_of,
    nothing_relayed,
    our_identity,
    our_spawner,
    pair_this_process,
)

GUARD = 60.0  # hang guard only


def _child_call(browser: FakeBrowser, tmp_path: Path) -> dict[str, Any]:
    script = tmp_path / "client.py"
    script.write_text(BRIDGE_CLIENT)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=host_env(browser.runtime),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def _cli(runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabwarden", *args],
        capture_output=True,
        text=True,
        env=host_env(runtime),
        timeout=60,
    )


@pytest.mark.promise("H1-05")
def test_the_host_tells_a_revoked_client_it_was_revoked_and_a_stranger_nothing(
    fake_browser: FakeBrowser, tmp_path: Path
) -> None:
    config = config_of(fake_browser)
    pair_this_process(config)  # label "pytest"
    fake_browser.wait_socket()
    fake_browser.hello()
    answering = threading.Thread(target=answer_one_tab_list, args=(fake_browser,), daemon=True)
    answering.start()
    assert _child_call(fake_browser, tmp_path) == {"ok": {"tabs": []}}
    answering.join(GUARD)

    revoked = _cli(fake_browser.runtime, "revoke", "client", "pytest")
    assert revoked.returncode == 0, revoked.stderr
    before = (config / "trust.json").read_bytes()
    answer = _child_call(fake_browser, tmp_path)
    assert answer["code"] == "client_revoked", answer
    assert "was revoked: it was paired as 'pytest' and revoked on " in answer["message"]
    assert "`tabwarden pair-client` at a terminal" in answer["message"]
    assert our_identity().sha256[:12] not in answer["message"]

    # A client nobody ever paired (the one an in-process bridge client is measured as) is
    # refused as before, and told nothing about the revoked one.
    async def stranger() -> BridgeError:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)}
        )
        try:
            await wait_until_extension_connected(client.status)
            with pytest.raises(BridgeError) as refused:
                await client.call("tab_list")
            return refused.value
        finally:
            await client.close()

    error = asyncio.run(asyncio.wait_for(stranger(), GUARD))
    assert our_spawner().sha256 != our_identity().sha256
    assert error.code == "client_not_paired", error
    assert "pytest" not in str(error) and "revoked" not in str(error)
    nothing_relayed(fake_browser)
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.promise("H1-05")
def test_a_revoked_client_is_told_so_by_tabwarden_mcp_and_nothing_is_relayed(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    """The whole chain: the real ``tabwarden mcp`` spawned by this process, served, then revoked
    with the real CLI; its next call (hop 1) and a fresh start answer ``client_revoked``."""
    runtime = attested_browser.runtime
    pair_this_process(config_of(attested_browser))
    codes: list[dict[str, Any]] = []

    async def session() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "tabwarden", "mcp"], env=host_env(runtime)
        )
        with open(tmp_path / "mcp.err", "a") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                if not codes:
                    answering = threading.Thread(
                        target=answer_one_tab_list, args=(attested_browser,), daemon=True
                    )
                    answering.start()
                    result = await client.call_tool("tab_list", {})
                    await asyncio.to_thread(answering.join, GUARD)
                    assert tool_error(result) is None, result
                    assert _cli(runtime, "revoke", "client", "pytest").returncode == 0
                    await asyncio.to_thread(
                        attested_browser.wait_stderr, "cut: this client was revoked"
                    )
                codes.append(tool_error(await client.call_tool("tab_list", {})) or {})

    asyncio.run(asyncio.wait_for(session(), GUARD))
    asyncio.run(asyncio.wait_for(session(), GUARD))  # a fresh start of the revoked client
    assert [c.get("code") for c in codes] == ["client_revoked", "client_revoked"], codes
    for error in codes:
        assert "it was paired as 'pytest'" in error["message"], error
        assert "`tabwarden pair-client`" in error["message"], error
    nothing_relayed(attested_browser)
