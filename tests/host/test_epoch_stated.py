"""The host states the trust record's epoch to the extension (for the extension's ratchet):
in its welcome and in every relayed request, always the epoch of the record it is enforcing at
that moment. The real host process; Chrome is played by ``FakeBrowser``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

from tabwarden.mcp_server.bridge_client import BridgeClient
from tests.fakes import FakeBrowser, host_env, wait_until_extension_connected
from tests.fixtures import config_of, gate_of, pair_in_process_client

GUARD = 60.0  # hang guard only


def _answer(browser: FakeBrowser, seen: list[dict[str, object]], count: int) -> threading.Thread:
    def run() -> None:
        for _ in range(count):
            request = browser.receive()
            seen.append(request)
            browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_welcome_and_every_request_state_the_epoch_being_enforced(
    fake_browser: FakeBrowser,
) -> None:
    config = config_of(fake_browser)
    pair_in_process_client(config)
    gate = gate_of(config)
    first = gate.current().epoch
    assert first > 0
    fake_browser.wait_socket()
    welcome = fake_browser.hello()
    assert welcome["type"] == "welcome" and welcome["epoch"] == first

    async def scenario() -> None:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)}
        )
        await wait_until_extension_connected(client.status)
        seen: list[dict[str, object]] = []
        answerer = _answer(fake_browser, seen, 1)
        assert await client.call("tab_list") == {"tabs": []}
        await asyncio.to_thread(answerer.join, 30)
        assert [r["epoch"] for r in seen] == [first]

        # A narrowing at the terminal writes a new record: the very next request states it.
        restricted = subprocess.run(
            [sys.executable, "-m", "tabwarden", "policy", "restrict", "clickGraceSeconds=10"],
            capture_output=True,
            text=True,
            env=host_env(fake_browser.runtime),
            timeout=60,
        )
        assert restricted.returncode == 0, restricted.stderr
        later = gate.current().epoch
        assert later > first
        answerer = _answer(fake_browser, seen, 1)
        assert await client.call("tab_list") == {"tabs": []}
        await asyncio.to_thread(answerer.join, 30)
        assert [r["epoch"] for r in seen] == [first, later]
        assert all(type(r["epoch"]) is int for r in seen)
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), GUARD))
