"""End to end through every hop: a real MCP client (the SDK's stdio client) spawns
``tabwarden mcp``, which reaches the host Chrome launched through the manifest our own
``install`` wrote, which reaches the extension loaded unpacked from extension/."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.cli.demo import PAGE_TITLE, provision_throwaway_trust
from tabwarden.manifests import ALLOWED_ORIGIN
from tests.browser.harness import extension_connected
from tests.fakes import tool_error

pytestmark = pytest.mark.browser


def _our_interpreter() -> str:
    return os.path.realpath("/proc/self/exe")


def _params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "tabwarden", "mcp"], env=env)


@pytest.mark.promise("H3-01")
def test_installed_manifest_is_pinned(browser: ThrowawayBrowser) -> None:
    manifest = json.loads(
        (browser.profile / "NativeMessagingHosts" / "dev.tabwarden.host.json").read_text()
    )
    assert manifest["allowed_origins"] == [ALLOWED_ORIGIN]
    assert manifest["type"] == "stdio"


@pytest.mark.promise("H3-06", "H4-10")
async def test_tab_list_through_every_hop_then_browser_closed(
    browser: ThrowawayBrowser, page_url: str
) -> None:
    provision_throwaway_trust(
        browser.root / "config", client_exe=_our_interpreter(), origins=[page_url.rstrip("/")]
    )
    browser.start(page_url)  # the person's own tab: the agent must never see it

    async with Client(_params(browser.env)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert (
            tools["tab_list"].annotations is not None
            and tools["tab_list"].annotations.read_only_hint
        )
        # Published output schemas are {"type": "object"} (ADR 0012): the server checks every
        # result against its full model before sending it.
        assert tools["tab_list"].output_schema == {"type": "object"}

        status = await extension_connected(client)
        assert status["hostReachable"] and status["protocolVersion"] == 1
        assert status["browser"] == "chromium"

        result = await client.call_tool("tab_list", {})
        assert not result.is_error, result.content
        assert result.structured_content["tabs"] == []  # the person's tab is invisible

        opened = await client.call_tool("tab_open", {"url": page_url})
        assert not opened.is_error, opened.content
        tab = opened.structured_content["tab"]
        result = await client.call_tool("tab_list", {})
        tabs: list[dict[str, Any]] = result.structured_content["tabs"]
        assert [(t["id"], t["url"], t["title"]) for t in tabs] == [
            (tab["id"], page_url, PAGE_TITLE)
        ]

        # The browser goes away: the next call answers, with the stable code, instead of
        # hanging.
        await asyncio.to_thread(browser.stop)
        after = await client.call_tool("tab_list", {})
        assert after.is_error
        error = tool_error(after)
        assert error is not None
        assert error["code"] == "extension_not_connected"
        assert error["hint"]
        status = (await client.call_tool("bridge_status", {})).structured_content
        assert status["extensionConnected"] is False and status["hostReachable"] is False

    # Chrome's EOF (or the signal) made the host remove its socket and run secret.
    assert list((browser.root / "run").glob("*.sock")) == []
    assert list((browser.root / "run").glob("*.secret")) == []


@pytest.mark.promise("H1-01")
async def test_paired_client_drives_the_browser_and_an_unpaired_one_is_refused(
    browser: ThrowawayBrowser, page_url: str
) -> None:
    """The pinned posture (only a paired client is served), end to end: the record pairs this test's
    interpreter (the program that spawns `tabwarden mcp`), the host Chrome launched enforces it
    too."""
    provision_throwaway_trust(
        browser.root / "config", client_exe=_our_interpreter(), origins=[page_url.rstrip("/")]
    )
    browser.start("about:blank")

    async with Client(_params(browser.env)) as client:
        await extension_connected(client)
        result = await client.call_tool("tab_open", {"url": page_url})
        assert not result.is_error, result.content
        text = await client.call_tool(
            "page_text", {"tabId": result.structured_content["tab"]["id"]}
        )
        assert not text.is_error, text.content
        assert "Hello from a local page" in text.structured_content["text"]

    # Another MCP client program: the same interpreter running other code, which forks
    # `tabwarden mcp`. (A `/bin/sh -c` parent would be a wrapper, measured through to this
    # test, which is paired.) Its identity is the interpreter *and* that code: not paired.
    sh_params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "import subprocess, sys; "
            "sys.exit(subprocess.call([sys.executable, '-m', 'tabwarden', 'mcp']))",
        ],
        env=browser.env,
    )

    async with Client(sh_params) as client:
        result = await client.call_tool("tab_list", {})
        assert result.is_error
        error = tool_error(result)
        assert error is not None
        assert error["code"] == "client_not_paired"
