"""A refused tap in the confirm window, in real Chromium: an enrolled browser is asked to approve a
new site with a tap, the authenticator that answers is a clone of the enrolled one (its sign
counter is behind the host's), and the host refuses. The window must say why in plain words next
to the tap control, with the next step, and stay open until the person closes it; the agent gets
the new site's plain refusal, ``origin_not_approved`` (no reason travels to it); nothing in the
trust record changes. A PNG of the window is saved for a person to look at (the path is
printed; TABWARDEN_CONFIRM_SHOT chooses it)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import confirm_page_presence, policy_status, press, shows
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.browser.webauthn import add_authenticator
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

#: shared/confirm-window.js CONFIRM_WINDOW less the popup window's own frame (test_ui_layout.py).
WINDOW = {"width": 460, "height": 360 - 64}


async def _clone(cdp: Any, authenticator: str) -> list[dict[str, Any]]:
    """The enrolled credential as it is now (its counter included): a cloned key."""
    found = await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
    creds: list[dict[str, Any]] = found["credentials"]
    assert creds, "the options page's authenticator holds no credential"
    return creds


@pytest.mark.promise("PR-10")
async def test_a_refused_tap_says_why_in_the_confirm_window_and_stays_open(
    browser: ThrowawayBrowser, site: str, tmp_path: Path
) -> None:
    config = browser.config
    gate = provision_for_pairing(browser, [site])
    other = site.replace("127.0.0.1", "localhost")
    shot = Path(os.environ.get("TABWARDEN_CONFIRM_SHOT", str(tmp_path / "confirm-refused.png")))

    async with paired_options_page(browser) as paired:
        context, agent, options = paired.context, paired.agent, paired.page
        # The key is copied now; then the real one taps once, so the host's counter moves on.
        cloned = await _clone(paired.cdp, paired.authenticator)
        await options.click("#enable-eval")
        assert await policy_status(options, "done") == "done: policy.widen"
        before = (config / "trust.json").read_bytes()

        opening = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{other}/"}))
        window = await confirm_page_presence(context)
        await window.set_viewport_size(WINDOW)
        await shows(window, other)
        wcdp, wauth = await add_authenticator(context, window)
        for cred in cloned:
            await wcdp.send(
                "WebAuthn.addCredential", {"authenticatorId": wauth, "credential": cred}
            )
        await press(window, "#tap")

        # The agent: a plain refusal, no reason, nothing opened, nothing approved.
        opened = await opening
        error = tool_error(opened) or {}
        assert error.get("code") == "origin_not_approved", opened.content
        assert "counter" not in str(opened.content), opened.content
        assert other not in gate.current().policy.origins
        assert (config / "trust.json").read_bytes() == before

        # The person: the reason, in the options page's words, next to the control; the
        # next step under it; the window still open, Close focused.
        await window.wait_for_function(
            "() => (document.querySelector('#status')?.textContent ?? '').startsWith('ref')",
            timeout=30_000,
        )
        status = await window.text_content("#status") or ""
        hint = await window.text_content("#hint") or ""
        assert "sign counter did not increase" in status, status
        assert status != "refused: presence_refused", status
        assert "tabwarden revoke browser" in status, status
        assert "The agent has to ask again" in hint, hint
        assert (await window.text_content("h1") or "").startswith("Not allowed"), status
        assert not window.is_closed()
        assert await window.is_visible("#close")
        assert await window.evaluate("() => document.activeElement?.id") == "close"
        await window.screenshot(path=str(shot))
        print(f"confirm window with a refused tap: {shot}")
        # All of it readable without scrolling at the window's size, nothing sideways.
        for element in ("#tap", "#status", "#hint", "#close"):
            box = await window.locator(element).bounding_box()
            assert box is not None, element
            assert box["y"] + box["height"] <= WINDOW["height"] + 0.5, (element, box)
            assert box["x"] >= 0 and box["x"] + box["width"] <= WINDOW["width"] + 0.5, (
                element,
                box,
            )
        assert await window.evaluate(
            "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )

        # Close closes it. The waiter is registered before the click: the window can close
        # while the click is still being acknowledged, and a listener added after that waits
        # for a close that has already happened.
        async with window.expect_event("close", timeout=30_000):
            await press(window, "#close")
        assert window.is_closed()
