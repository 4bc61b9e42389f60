"""Pairing a browser from the extension's options page, for real: the one-time code from
`tabwarden pair` (written here through the same store API), Chrome's CDP virtual authenticator on
the options page, the host verifying the registration with fido2 and signing the credential into
the trust record; then a host whose key is not the pinned one closes the extension's gate."""

from __future__ import annotations

import json
import os
import signal
import time

import psutil
import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tabwarden.trust.gate import host_key_store
from tabwarden.trust.keys import HostKey
from tests.browser.harness import (
    CODE,
    chromium,
    connected_agent,
    mcp_client,
    options_status,
    pair_options_page,
)
from tests.browser.paired import host_fingerprint, options_page, provision_for_pairing
from tests.deadline import until
from tests.fakes import tool_error
from tests.fixtures import our_identity

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


def _trust_bytes(browser: ThrowawayBrowser) -> bytes:
    return (browser.root / "config" / "trust.json").read_bytes()


def _kill_hosts(browser: ThrowawayBrowser) -> int:
    killed = 0
    for proc in psutil.process_iter(["cmdline", "environ"]):
        cmd = proc.info.get("cmdline") or []
        if "tabwarden" in cmd and "host" in cmd:
            env = proc.info.get("environ") or {}
            if env.get("TABWARDEN_RUNTIME_DIR") == str(browser.root / "run"):
                os.kill(proc.pid, signal.SIGTERM)
                killed += 1
    return killed


@pytest.mark.promise("PR-05", "BP-01", "BP-08")
async def test_pair_a_browser_with_the_code_and_a_tap_then_catch_a_swapped_host_key(
    browser: ThrowawayBrowser,
) -> None:
    config = browser.root / "config"
    gate = provision_for_pairing(browser)
    pinned_fingerprint = host_fingerprint(browser)

    async with chromium(browser) as context:
        async with connected_agent(browser) as agent:
            page, _, _ = await options_page(context)

            # A wrong code is refused and nothing changes.
            before = _trust_bytes(browser)
            await pair_options_page(page, "0000-0000")
            assert (await options_status(page, "refused")).startswith("refused: presence_refused")
            assert gate.current().browsers == ()
            assert (
                json.loads(_trust_bytes(browser))["browsers"]
                == json.loads(before)["browsers"]
                == []
            )

            # The right code and a tap: the credential is verified and signed into the record.
            await pair_options_page(page, CODE)
            assert (await options_status(page, "paired")).startswith("paired")
            assert (await page.text_content("#fingerprint") or "").strip() == pinned_fingerprint
            [paired] = gate.current().browsers
            assert paired.label == "chromium" and len(paired.credentials) == 1
            assert paired.credentials[0].path == "webauthn"
            audit = [json.loads(line) for line in (config / "audit.jsonl").read_text().splitlines()]
            assert any(e["event"] == "browser_pair" and e["path"] == "webauthn" for e in audit)

            # The code was single use.
            await page.reload()
            await pair_options_page(page, CODE)
            assert (await options_status(page, "refused")).startswith("refused: presence_refused")

            # Tools still work through the trusted host.
            result = await agent.call_tool("tab_list", {})
            assert not result.is_error, result.content

            # Someone swaps the host key (and re-signs a record to match) under the running browser.
            impostor = HostKey.generate()
            host_key_store(config, "file").save(impostor, replace=True)
            store.initialise(
                config / "trust.json", impostor, "file", int(time.time()), replace_existing=True
            )
            me = our_identity()  # this test process, as the MCP servers measure it
            store.add_client(
                config / "trust.json", impostor, "pytest", me.exe, me.sha256, int(time.time())
            )
            assert _kill_hosts(browser) == 1  # the extension reconnects and a new host starts

        # A fresh MCP session reaches the new host; the extension's gate stays closed.
        async with mcp_client(browser) as agent2:

            async def refused() -> bool:
                error = tool_error(await agent2.call_tool("tab_list", {})) or {}
                return error.get("code") == "host_compromised"

            await until("the new host's calls answer host_compromised", refused, interval_s=0.5)
