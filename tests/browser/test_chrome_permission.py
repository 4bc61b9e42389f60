"""Chrome's own site permission, for real: the shipped extension (no site granted at install),
headful Chromium on a private Xvfb display, Chrome's permission dialog answered at the X11 level
(tests/browser/chrome_dialog.py). Allowing a new origin in tabwarden's confirm window requests
Chrome's host permission in that click; the tool runs only when both tabwarden and Chrome said
yes. Chrome's Deny is a denial: nothing is recorded. And an origin the signed policy already
approves (at the terminal) still needs Chrome's grant before any page tool touches it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.chrome_dialog import answer_permission_dialog, when_done
from tests.browser.harness import (
    CODE,
    approved_origins,
    chromium,
    confirm_page,
    confirm_page_presence,
    extension_connected,
    mcp_client,
    options_status,
    pair_options_page,
    press,
    trust_this_process,
)
from tests.browser.paired import OPTIONS
from tests.browser.webauthn import add_authenticator, copy_credentials
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


@pytest.fixture
def shipped() -> Iterator[ThrowawayBrowser]:
    """A throwaway browser loading the extension exactly as shipped (no loopback pre-grant)."""
    with ThrowawayBrowser(grant_loopback=False) as b:
        b.install_host()
        yield b


def _grants(browser: ThrowawayBrowser) -> list[dict[str, Any]]:
    path = browser.config / "audit.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e.get("event") == "origin_grant"]


async def _chrome_grants(context: Any, origin: str) -> bool:
    """Ask the extension's own service worker whether Chrome holds the host permission."""
    [worker] = context.service_workers or [await context.wait_for_event("serviceworker")]
    return bool(
        await worker.evaluate("(p) => chrome.permissions.contains({origins: [p]})", f"{origin}/*")
    )


async def _open_answering(context: Any, agent: Any, display: str, url: str, *, allow: bool) -> Any:
    """tab_open ``url``: allow in tabwarden's window, then answer Chrome's dialog."""
    opening = asyncio.create_task(agent.call_tool("tab_open", {"url": url}))
    await press(await confirm_page(context), "#allow")  # the click is Chrome's user gesture
    answer = await answer_permission_dialog(display, allow, when_done(opening), 60)
    assert answer.clicks, f"Chrome's permission dialog never showed: {answer}"
    return await opening


@pytest.mark.promise("H4-42")
async def test_a_new_origin_needs_tabwarden_and_chrome(
    shipped: ThrowawayBrowser, site: str, x_display: str
) -> None:
    trust_this_process(shipped, [])
    other = site.replace("127.0.0.1", "localhost")

    async with chromium(shipped, x_display) as context, mcp_client(shipped) as agent:
        await extension_connected(agent)
        assert not await _chrome_grants(context, site)  # nothing granted at install

        # Chrome's Deny: the tool is refused and nothing is recorded anywhere.
        denied = await _open_answering(context, agent, x_display, f"{other}/", allow=False)
        assert (tool_error(denied) or {}).get("code") == "origin_not_approved"
        assert approved_origins(shipped) == () and _grants(shipped) == []
        assert not await _chrome_grants(context, other)

        # Allow in both: Chrome holds the permission, the grant is signed, tools work.
        opened = await _open_answering(context, agent, x_display, f"{site}/", allow=True)
        assert not opened.is_error, opened.content
        assert await _chrome_grants(context, site)
        assert approved_origins(shipped) == (site,)
        assert [g["path"] for g in _grants(shipped)] == ["window"]
        tab = opened.structured_content["tab"]["id"]
        text = await agent.call_tool("page_text", {"tabId": tab})
        assert not text.is_error and "Sign in" in text.structured_content["text"]
        shot = await agent.call_tool("page_screenshot", {"tabId": tab})
        assert not shot.is_error and shot.content[0].type == "image"


@pytest.mark.promise("H4-42")
async def test_an_origin_approved_at_the_terminal_still_needs_chromes_grant(
    shipped: ThrowawayBrowser, site: str, x_display: str
) -> None:
    # The person approved the site at the terminal (signed policy); Chrome has granted nothing.
    trust_this_process(shipped, [site])

    async with chromium(shipped, x_display) as context, mcp_client(shipped) as agent:
        await extension_connected(agent)
        denied = await _open_answering(context, agent, x_display, f"{site}/", allow=False)
        assert (tool_error(denied) or {}).get("code") == "origin_not_approved"
        assert not await _chrome_grants(context, site)
        assert approved_origins(shipped) == (site,)  # the signed approval itself is untouched

        opened = await _open_answering(context, agent, x_display, f"{site}/", allow=True)
        assert not opened.is_error, opened.content
        assert await _chrome_grants(context, site)
        # Granted once, it is remembered by Chrome: the next call asks nobody.
        again = await agent.call_tool("tab_open", {"url": f"{site}/page2"})
        assert not again.is_error, again.content


@pytest.mark.promise("H4-42")
async def test_an_enrolled_browser_taps_and_chrome_grants_in_the_same_click(
    shipped: ThrowawayBrowser, site: str, x_display: str
) -> None:
    """For an enrolled browser a new site's window shows only Tap: that click requests Chrome's
    permission first (the gesture), then runs the WebAuthn tap that signs the origin into the
    policy. A site already approved by a tap only lacks Chrome's grant: a click asks for it."""
    import hashlib
    import time

    from tabwarden.trust import store

    trust_this_process(shipped, [])
    store.set_pairing_code(
        shipped.config / "trust.json",
        hashlib.sha256(CODE.encode()).hexdigest(),
        int(time.time()) + 600,
    )

    async with chromium(shipped, x_display) as context, mcp_client(shipped) as agent:
        await extension_connected(agent)
        options = await context.new_page()
        await options.goto(OPTIONS)
        cdp, authenticator = await add_authenticator(context, options)
        await pair_options_page(options, CODE)
        assert (await options_status(options, "paired")).startswith("paired")

        # A site approved on the options page with a tap: only Chrome's grant is missing, so
        # the window asks for a click (no second tap), and that click requests the grant.
        other = site.replace("127.0.0.1", "localhost")
        await options.fill("#origin", other)
        await options.click("#approve-origin")
        await options.wait_for_function(
            "() => (document.getElementById('policy-status')?.textContent || '').startsWith('done')"
        )
        assert approved_origins(shipped) == (other,) and not await _chrome_grants(context, other)
        opened = await _open_answering(context, agent, x_display, f"{other}/", allow=True)
        assert not opened.is_error, opened.content
        assert await _chrome_grants(context, other)

        # A new site: the window shows only Tap; its click requests Chrome's grant, then taps.
        opening = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{site}/"}))
        window = await confirm_page_presence(context)
        assert not await window.is_visible("#allow")  # an enrolled browser never clicks
        await copy_credentials(cdp, authenticator, context, window)
        await press(window, "#tap")
        answer = await answer_permission_dialog(x_display, True, when_done(opening), 60)
        assert answer.clicks, f"Chrome's permission dialog never showed: {answer}"
        opened = await opening
        assert not opened.is_error, opened.content
        assert await _chrome_grants(context, site)
        assert set(approved_origins(shipped)) == {other, site}
