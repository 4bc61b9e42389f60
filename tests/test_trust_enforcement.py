"""The trust record enforced at every point, with real processes: the real host (attested, or the
unattested harness where the test process itself is the client), the real `tabwarden mcp` spawned
by the SDK's stdio client, and the real CLI writing the record."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError
from tabwarden.mcp_server.catalogue import BY_NAME
from tabwarden.trust import store
from tests.fakes import FakeBrowser, host_env, tool_error, wait_until_extension_connected
from tests.fixtures import (
    config_of,
    nothing_relayed,
    our_identity,
    our_interpreter,
    pair_in_process_client,
    pair_record,
    pair_this_process,
)

GUARD = 60.0  # hang guard only


def cli(runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabwarden", *args],
        capture_output=True,
        text=True,
        env=host_env(runtime),
        timeout=60,
    )


def answer_tabs(browser: FakeBrowser, count: int = 1) -> threading.Thread:
    def run() -> None:
        for _ in range(count):
            request = browser.receive()
            browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def _until_connected(client: Any) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        result = await client.call_tool("bridge_status", {})
        if not result.is_error and result.structured_content["extensionConnected"]:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"extension never connected: {result.structured_content}")


def _mcp(runtime: Path, errlog: Any) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tabwarden", "mcp"], env=host_env(runtime)
    )
    return Client(stdio_client(params, errlog=errlog))


def _code(result: Any) -> str | None:
    return (tool_error(result) or {}).get("code")


# -- the kill switch -------------------------------------------------------------------------


@pytest.mark.promise("TR-10")
def test_kill_reaches_the_host_within_one_request(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)}
        )
        await wait_until_extension_connected(client.status)
        answerer = answer_tabs(fake_browser)
        assert await client.call("tab_list") == {"tabs": []}
        answerer.join(5)
        assert cli(fake_browser.runtime, "kill", "--reason", "test").returncode == 0
        with pytest.raises(BridgeError) as refused:
            await client.call("tab_list")  # the very next request
        assert refused.value.code == "killed"
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    fake_browser.wait_stderr("the kill switch is engaged")


@pytest.mark.promise("H1-06", "TR-10")
def test_kill_reaches_the_mcp_server_mid_session(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    runtime = attested_browser.runtime
    pair_this_process(runtime.parent / "config")

    async def scenario() -> None:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(runtime, errlog) as client:
                await _until_connected(client)
                answerer = answer_tabs(attested_browser)
                assert _code(await client.call_tool("tab_list", {})) is None
                answerer.join(5)
                assert cli(runtime, "kill").returncode == 0
                assert _code(await client.call_tool("tab_list", {})) == "killed"

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    audit = cli(runtime, "audit", "--json")
    events = [
        (e["event"], e["decision"], e.get("tool"), e.get("refusal"))
        for e in json.loads(audit.stdout)
    ]
    assert ("tool_call", "allowed", "tab_list", None) in events
    assert ("kill", "narrowed", None, None) in events
    assert events[-1] == ("tool_call", "refused", "tab_list", "killed")


# -- pairing and revocation ------------------------------------------------------------------


@pytest.mark.promise("H1-04")
def test_with_no_client_paired_every_call_is_refused_and_the_spawner_remembered(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    """The attacker: a program nobody paired starts `tabwarden mcp` against a record that pairs
    no client yet (no unpinned posture). Every tool answers client_not_paired naming the command
    that pins a client, nothing reaches the browser, the start says so at ERROR, and the spawner
    is remembered so `pair-client` can find it."""
    config = attested_browser.runtime.parent / "config"
    pair_record(config)  # a host key and a record, no client
    before = (config / "trust.json").read_bytes()
    codes: dict[str, str | None] = {}

    async def scenario() -> None:
        with open(tmp_path / "mcp.err", "w") as errlog:
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "tabwarden", "mcp", "--caps", "all"],
                env=host_env(attested_browser.runtime),
            )
            async with Client(stdio_client(params, errlog=errlog)) as client:
                for tool in (await client.list_tools()).tools:
                    result = await client.call_tool(tool.name, {})
                    codes[tool.name] = _code(result)
                    error = tool_error(result) or {}
                    assert "`tabwarden pair-client`" in error.get("message", ""), result

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert set(codes) == set(BY_NAME)
    assert set(codes.values()) == {"client_not_paired"}, codes
    nothing_relayed(attested_browser)
    assert "ERROR: NOT PAIRED" in (tmp_path / "mcp.err").read_text()
    spawners = (config / "spawners.json").read_text()
    assert our_identity().sha256 in spawners
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.promise("H1-01")
def test_unpaired_spawner_is_refused_once_a_client_is_paired(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    config = attested_browser.runtime.parent / "config"
    pair_record(config, client_exe="/bin/sh", label="someone-else")
    before = (config / "trust.json").read_bytes()

    async def scenario() -> None:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(attested_browser.runtime, errlog) as client:
                for tool in ("tab_list", "bridge_status"):
                    result = await client.call_tool(tool, {})
                    assert _code(result) == "client_not_paired", result
                    error = tool_error(result)
                    assert error is not None
                    assert "not a paired MCP client" in error["message"]

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.promise("H1-05", "TR-11")
def test_revocation_cuts_the_live_connection(attested_browser: FakeBrowser, tmp_path: Path) -> None:
    runtime = attested_browser.runtime
    pair_record(runtime.parent / "config", client_exe=our_interpreter(), label="pytest")

    async def scenario() -> None:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(runtime, errlog) as client:
                await _until_connected(client)
                answerer = answer_tabs(attested_browser)
                assert _code(await client.call_tool("tab_list", {})) is None
                answerer.join(5)
                assert cli(runtime, "revoke", "client", "pytest").returncode == 0
                # The host cuts the live bridge connection on its own, without a request.
                await asyncio.to_thread(
                    attested_browser.wait_stderr, "cut: this client was revoked"
                )
                assert _code(await client.call_tool("tab_list", {})) == "client_revoked"

    asyncio.run(asyncio.wait_for(scenario(), GUARD))


@pytest.mark.promise("TR-05")
def test_paired_client_is_served_and_an_unreadable_record_refuses(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    runtime = attested_browser.runtime
    config = runtime.parent / "config"
    pair_record(config, client_exe=our_interpreter())

    async def scenario() -> None:
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with _mcp(runtime, errlog) as client:
                await _until_connected(client)
                answerer = answer_tabs(attested_browser)
                assert _code(await client.call_tool("tab_list", {})) is None
                answerer.join(5)
                os.chmod(config / "trust.json", 0o644)  # group/other-readable: not trusted
                assert _code(await client.call_tool("tab_list", {})) == "trust_unreadable"
                os.chmod(config / "trust.json", 0o600)
                (config / "trust.json").write_text("{truncated")
                assert _code(await client.call_tool("tab_list", {})) == "trust_unreadable"

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert "NOT PAIRED" not in (tmp_path / "mcp.err").read_text()


# -- attestation on the real socket ----------------------------------------------------------


@pytest.mark.promise("H2-04")
def test_impostor_on_the_socket_is_refused_with_the_reason_in_the_host_log(
    attested_browser: FakeBrowser,
) -> None:
    """The test process is a same-UID impostor: same interpreter, but not `-I -m tabwarden`."""
    import socket

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(attested_browser.runtime / "test.sock"))
    assert s.recv(65536) == b""  # closed without even a challenge
    s.close()
    log = attested_browser.wait_stderr("bridge connection #1 refused")
    assert "pytest" in log or "entry" in log or "script" in log


# -- a vanished record ------------------------------------------------------------------------


@pytest.mark.promise("TR-06")
def test_deleting_record_and_key_while_killed_never_falls_back_to_unpaired(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    """Hop 1: a same-user process deletes trust.json and the file-store key while the kill
    switch is on; the running MCP server keeps refusing, says why in its log, and relays
    nothing to the extension."""
    runtime = attested_browser.runtime
    config = runtime.parent / "config"
    pair_record(config, client_exe=our_interpreter())
    mcp_err = tmp_path / "mcp.err"

    async def scenario() -> None:
        with open(mcp_err, "w") as errlog:
            async with _mcp(runtime, errlog) as client:
                await _until_connected(client)
                answerer = answer_tabs(attested_browser)
                assert _code(await client.call_tool("tab_list", {})) is None
                answerer.join(5)
                assert cli(runtime, "kill").returncode == 0
                assert _code(await client.call_tool("tab_list", {})) == "killed"
                (config / "trust.json").unlink()
                (config / "host-key.pem").unlink()
                for _ in range(3):
                    assert _code(await client.call_tool("tab_list", {})) == "trust_unreadable"

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    assert "vanished" in mcp_err.read_text()
    nothing_relayed(attested_browser)


@pytest.mark.promise("TR-06")
def test_the_host_never_falls_back_either(fake_browser: FakeBrowser) -> None:
    """Hop 2: the same deletion under a running host; its next request is refused with the
    reason in its log and nothing reaches the extension."""
    config = fake_browser.runtime.parent / "config"
    pair_in_process_client(config)
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)}
        )
        await wait_until_extension_connected(client.status)
        answerer = answer_tabs(fake_browser)
        assert await client.call("tab_list") == {"tabs": []}
        answerer.join(5)
        assert cli(fake_browser.runtime, "kill").returncode == 0
        (config / "trust.json").unlink()
        (config / "host-key.pem").unlink()
        for _ in range(3):
            with pytest.raises(BridgeError) as refused:
                await client.call("tab_list")
            assert refused.value.code == "trust_unreadable"
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
    fake_browser.wait_stderr("vanished")
    nothing_relayed(fake_browser)


# -- the epoch ratchet: a fresh host after a restart -------------------------------------------


def _put_back(path: Path, data: bytes) -> None:
    """What a same-user program does to trust.json: a new file, ours, 0600 (the seal beside the
    host key is left as tabwarden wrote it)."""
    temp = path.with_name(path.name + ".attacker")
    temp.write_bytes(data)
    os.chmod(temp, 0o600)
    os.replace(temp, path)


def _old_file(old: bytes, newest: bytes) -> bytes:
    return old


def _old_record_with_a_raised_epoch(old: bytes, newest: bytes) -> bytes:
    return json.dumps({**json.loads(old), "epoch": json.loads(newest)["epoch"] + 1}).encode()


def _kill_dropped_at_the_same_epoch(old: bytes, newest: bytes) -> bytes:
    edited = json.loads(newest)
    edited["kill"] = {"serial": 0, "events": []}
    edited["policy"]["restrictions"] = []
    return json.dumps(edited).encode()


ROLLBACKS = {
    "the old file put back": (_old_file, "trust record rolled back"),
    "the old record with its epoch raised": (
        _old_record_with_a_raised_epoch,
        "trust record edited outside tabwarden",
    ),
    "kill and restriction dropped, same epoch": (
        _kill_dropped_at_the_same_epoch,
        "trust record edited outside tabwarden",
    ),
}


async def _every_request_refused(browser: FakeBrowser) -> None:
    client = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(browser.runtime)})
    try:
        await wait_until_extension_connected(client.status)  # so the host itself must refuse
        for _ in range(3):
            with pytest.raises(BridgeError) as refused:
                await client.call("tab_list")
            assert refused.value.code == "trust_unreadable", browser.stderr
    finally:
        await client.close()


def _one_request_served(browser: FakeBrowser) -> None:
    async def scenario() -> None:
        client = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(browser.runtime)})
        await wait_until_extension_connected(client.status)
        answerer = answer_tabs(browser)
        assert await client.call("tab_list") == {"tabs": []}
        answerer.join(5)
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), GUARD))


@pytest.mark.parametrize("forgery", ROLLBACKS)
@pytest.mark.promise("BP-06")
def test_a_rollback_after_a_host_restart_is_refused(runtime_dir: Path, forgery: str) -> None:
    """A rollback, host side: the host serves a record with eval on; a copy is taken; the person
    narrows (eval off, kill on); the host is stopped (Chrome would relaunch it) and the copy —
    as is, with its epoch raised, or the newest record with the kill dropped — put back. The
    new host refuses every request with the reason in its log, relays nothing, latches the kill
    switch; `status` exits non-zero and says what to do."""
    forge, reason = ROLLBACKS[forgery]
    config = runtime_dir.parent / "config"
    key = pair_in_process_client(config)
    record = config / "trust.json"
    store.set_baseline(record, key, {"eval": True}, int(time.time()))
    first = FakeBrowser(runtime_dir)
    try:
        first.wait_socket()
        first.hello()
        _one_request_served(first)
        old = record.read_bytes()
        assert cli(runtime_dir, "policy", "restrict", "eval=false").returncode == 0
        assert cli(runtime_dir, "kill").returncode == 0
    finally:
        first.close()
    _put_back(record, forge(old, record.read_bytes()))
    assert not (config / "kill-latch").exists()

    second = FakeBrowser(runtime_dir)
    try:
        second.wait_socket()
        second.hello()
        asyncio.run(asyncio.wait_for(_every_request_refused(second), GUARD))
        second.wait_stderr(reason)
        nothing_relayed(second)
    finally:
        second.close()
    assert (config / "kill-latch").exists()
    status = cli(runtime_dir, "status")
    assert status.returncode != 0
    assert reason in status.stdout and "tabwarden unkill" in status.stdout
    _put_back(record, old)  # even a valid file back: the latch holds until a person acts
    assert cli(runtime_dir, "status").returncode != 0


@pytest.mark.parametrize(
    "deleted",
    [("trust.json",), ("trust.json", "host-key.pem"), ("trust.json", "trust-ratchet.json")],
)
@pytest.mark.promise("BP-06")
def test_a_vanished_record_is_tampering_for_a_fresh_host(
    runtime_dir: Path, deleted: tuple[str, ...]
) -> None:
    """A deleted record, for a process started after the deletion: the key store still holds the
    host key or the ratchet seal (or both), so the missing record is tampering, never "nothing
    paired yet" — `pair` seals before it stores a key, so a key alone is never a step of pairing."""
    config = runtime_dir.parent / "config"
    pair_record(config)
    assert cli(runtime_dir, "kill").returncode == 0
    for name in deleted:
        (config / name).unlink()
    host = FakeBrowser(runtime_dir)
    try:
        host.wait_socket()
        host.hello()
        asyncio.run(asyncio.wait_for(_every_request_refused(host), GUARD))
        host.wait_stderr("trust record vanished")
        nothing_relayed(host)
    finally:
        host.close()
    assert (config / "kill-latch").exists()
    status = cli(runtime_dir, "status")
    assert status.returncode != 0
    assert "vanished" in status.stdout and "tabwarden pair --reset" in status.stdout


@pytest.mark.promise("BP-06")
def test_the_extensions_witness_catches_record_and_seal_rolled_back_together(
    runtime_dir: Path,
) -> None:
    """An attacker who can write the key store too puts an older record *and* its seal back:
    the files agree. The extension's hello says it has seen a later epoch (``epochSeen``): the
    host raises the ratchet's floor, latches the kill switch, refuses every request with the
    reason in its log and relays nothing. An epochSeen no later than the record changes
    nothing."""
    config = runtime_dir.parent / "config"
    key = pair_in_process_client(config)
    record, seal = config / "trust.json", config / "trust-ratchet.json"
    store.set_baseline(record, key, {"eval": True}, int(time.time()))
    old_record, old_seal = record.read_bytes(), seal.read_bytes()
    old_epoch = json.loads(old_record)["epoch"]

    honest = FakeBrowser(runtime_dir)
    try:
        honest.wait_socket()
        honest.send({"type": "hello", "protocol": 1, "extensionVersion": "t", "epochSeen": 1})
        assert honest.receive()["type"] == "welcome"
        _one_request_served(honest)
    finally:
        honest.close()
    assert not (config / "kill-latch").exists()
    assert cli(runtime_dir, "kill").returncode == 0
    seen = json.loads(record.read_bytes())["epoch"]
    _put_back(record, old_record)
    _put_back(seal, old_seal)

    host = FakeBrowser(runtime_dir)
    try:
        host.wait_socket()
        host.send({"type": "hello", "protocol": 1, "extensionVersion": "t", "epochSeen": seen})
        assert host.receive()["type"] == "welcome"
        asyncio.run(asyncio.wait_for(_every_request_refused(host), GUARD))
        host.wait_stderr(f"trust record rolled back (epoch {old_epoch}, highest seen {seen})")
        nothing_relayed(host)
    finally:
        host.close()
    assert (config / "kill-latch").exists()
    assert record.read_bytes() == old_record  # the record itself is left as found
    status = cli(runtime_dir, "status")
    assert status.returncode != 0 and "rolled back" in status.stdout
