"""A browser whose native host is not registered says so, and names the command that fixes it.

In real Chromium with the host manifest removed from its profile: Chrome answers the extension's
connectNative with "Specified native messaging host not found.", and within 30 s the popup, the
options page and `bridge_status` name the cause and the `tabwarden install --browser chromium`
command (bridge_status: with this browser's own --manifest-dir), instead of "reconnecting".
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tests.browser.harness import chromium, mcp_client, trust_this_process
from tests.deadline import until

pytestmark = pytest.mark.browser

SOON_S = 30.0  # "within seconds": the first failed connect already says why
COMMAND = "`tabwarden install --browser chromium`"


async def _text(page: Any, selector: str) -> str:
    text: str = await page.evaluate(
        "(s) => { const e = document.querySelector(s);"
        " return e && !e.hidden ? e.textContent : ''; }",
        selector,
    )
    return text


async def test_a_missing_host_manifest_is_named_with_its_install_command(
    browser: ThrowawayBrowser,
) -> None:
    # The agent is paired (with no client paired, bridge_status is refused like every tool).
    trust_this_process(browser, [])
    hosts = browser.profile / "NativeMessagingHosts"
    (hosts / "dev.tabwarden.host.json").unlink()
    async with chromium(browser) as context:
        popup = await context.new_page()
        await popup.goto(f"chrome-extension://{EXTENSION_ID}/popup.html")

        async def popup_says() -> bool:
            await popup.reload()  # a fresh popup_status each look, as a person reopening it
            word = await _text(popup, "#state-word")
            state = await _text(popup, "#state")
            return word == "Host not installed for this browser" and (
                state.startswith("The tabwarden host is not registered for this browser")
                and COMMAND in state
                and state.endswith("[host_not_installed]")
                and "reconnect" not in state
            )

        await until(
            "the popup names the missing host and its command", popup_says, timeout_s=SOON_S
        )

        options = await context.new_page()
        await options.goto(f"chrome-extension://{EXTENSION_ID}/options.html")

        async def options_say() -> bool:
            return COMMAND in await _text(options, "#host-problem")

        await until("the options page names the command", options_say, timeout_s=SOON_S)

        agent: Client
        async with mcp_client(browser) as agent:
            want = {
                "code": "host_not_installed",
                "browser": "chromium",
                "command": f"tabwarden install --browser chromium --manifest-dir {hosts}",
            }

            async def status_says() -> dict[str, Any] | None:
                s: dict[str, Any] = (await agent.call_tool("bridge_status", {})).structured_content
                mine = [
                    p for p in s.get("hostProblems", [])
                    if {k: p.get(k) for k in want} == want
                ]  # fmt: skip
                return s if mine and not s["hostReachable"] else None

            await until("bridge_status names the command", status_says, timeout_s=SOON_S)
