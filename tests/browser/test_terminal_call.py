"""``tabwarden call`` round trip from a real terminal (a pty we hold the master of) through the
real chain into real headless Chromium: refused while it is not a paired client, served once the
person pairs the spawner it was remembered as, printing the browser's structured answer — and,
because each call is its own session (one ``tabwarden mcp`` process), the tab one call opened is
not the next call's."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tabwarden.bridge.spawner import recent_spawners
from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tabwarden.trust.gate import host_key_store
from tests.browser.harness import extension_connected, mcp_client
from tests.pty_cli import spawn_cli

pytestmark = pytest.mark.browser


async def _call(browser: ThrowawayBrowser, *args: str) -> tuple[int, bytes]:
    """`tabwarden call ARGS` typed at a real terminal: its exit status and what it printed."""
    return await asyncio.to_thread(spawn_cli(browser.env, "call", *args).finish, 120)


def _json(output: bytes) -> dict[str, Any]:
    text = output.decode().replace("\r\n", "\n")
    parsed: dict[str, Any] = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return parsed


@pytest.mark.promise("H1-10")
async def test_call_round_trip_from_a_real_terminal_into_real_chromium(
    trusted: ThrowawayBrowser, site: str
) -> None:
    browser, config = trusted, trusted.config
    browser.start("about:blank")  # Chrome as a person starts it: no Playwright in between
    async with mcp_client(browser) as agent:  # this test process is the paired client
        await extension_connected(agent, timeout_s=90)

    status, output = await _call(browser, "tab_open", f"url={site}/")
    assert status == 1 and b"error[client_not_paired]" in output, output

    seen = next(s for s in recent_spawners(config) if "-m tabwarden" in s.path)
    key = host_key_store(config, "file").load()
    assert key is not None
    store.add_client(config / "trust.json", key, "terminal", seen.path, seen.sha256, 1)

    status, output = await _call(browser, "tab_open", f"url={site}/")
    assert status == 0, output
    tab = _json(output)["tab"]
    assert tab["url"] == f"{site}/" and tab["title"] == "form"

    status, output = await _call(browser, "page_text", f"tabId={tab['id']}")
    assert status == 1 and b"error[tab_not_owned]" in output, output
