"""Live pages in real Chromium: the options page and the popup, left open, show what a
terminal changes — `tabwarden kill` turns the popup's indicator red, `tabwarden revoke client`
takes the client off the options page's list — without a reload: the real host notices the
trust record change on disk and pushes ``trust_changed`` (host/notices.py), the worker tells its
open pages (shared/live-refresh.js). A tap refused because the authenticator was cloned says why,
next to the button that asked. The popup closes an agent's tab, and the agent's session forgets
it. Each step waits on the DOM condition with a generous deadline, never a fixed sleep; the
changed pages are saved as PNGs under pytest's tmp dir (the path is printed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tests.browser.harness import ok, policy_status
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

BASE = f"chrome-extension://{EXTENSION_ID}/"
POPUP_WIDTH, POPUP_HEIGHT = 360, 600  # popup.css body width; Chrome caps a popup at 800×600
WAIT_MS = 60_000


def _cli(browser: ThrowawayBrowser, *args: str) -> None:
    """A command typed in a terminal, against this browser's throwaway record."""
    done = subprocess.run(  # noqa: S603 (this interpreter, our own CLI)
        [sys.executable, "-m", "tabwarden", *args],
        capture_output=True,
        text=True,
        env=browser.env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)


def _trust(browser: ThrowawayBrowser) -> bytes:
    return (browser.config / "trust.json").read_bytes()


@pytest.mark.promise("H4-07")
async def test_pages_follow_the_terminal_a_cloned_tap_says_why_and_the_popup_closes_agent_tabs(
    browser: ThrowawayBrowser, site: str, tmp_path: Path
) -> None:
    gate = provision_for_pairing(browser, origins=[site])
    shots = tmp_path / "ui-live"
    shots.mkdir()
    print(f"\nUI screenshots: {shots}")

    async with paired_options_page(browser) as paired:
        context, agent, options = paired.context, paired.agent, paired.page
        cdp, authenticator = paired.cdp, paired.authenticator
        await options.set_viewport_size({"width": 1280, "height": 900})
        await options.wait_for_function(
            "() => (document.getElementById('clients-paired')?.textContent || '').includes('demo')",
            timeout=WAIT_MS,
        )

        # -- the popup closes an agent's tab; the session forgets it ----------------------
        popup = await context.new_page()
        await popup.set_viewport_size({"width": POPUP_WIDTH, "height": POPUP_HEIGHT})
        await popup.goto(BASE + "popup.html")
        tab = (await ok(agent, "tab_open", {"url": f"{site}/"}))["tab"]["id"]
        row = f"#agent-tabs li.live button.close-tab[aria-label*='tab {tab} ']"
        await popup.wait_for_selector(row, timeout=WAIT_MS)
        await popup.screenshot(path=str(shots / "popup-agent-tab.png"))
        await popup.click(row)
        await popup.wait_for_function(
            """(tab) => (document.getElementById('agent-tabs-status')?.textContent || '')
              === 'done: closed 1 tab'
              && !(document.getElementById('agent-tabs')?.textContent || '')
                .includes(`tab ${tab} `)""",
            arg=tab,
            timeout=WAIT_MS,
        )
        listed = await ok(agent, "tab_list", {})
        assert tab not in [t["id"] for t in listed["tabs"]], listed
        gone = await agent.call_tool("page_snapshot", {"tabId": tab})
        assert (tool_error(gone) or {}).get("code") == "tab_not_owned", gone

        # -- a cloned authenticator's tap is refused, with the reason next to the button ---
        await options.bring_to_front()
        [cred] = (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator}))[
            "credentials"
        ]
        await options.click("#enable-eval")
        assert await policy_status(options, "done") == "done: policy.widen"
        await cdp.send(
            "WebAuthn.removeCredential",
            {"authenticatorId": authenticator, "credentialId": cred["credentialId"]},
        )
        await cdp.send(
            "WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": cred}
        )
        await options.click("#restrict-eval")  # narrowing: free, no tap
        assert await policy_status(options, "done") == "done: policy_restrict"
        before = _trust(browser)
        await options.click("#enable-eval")
        said = await policy_status(options, "refused")
        assert said.startswith(
            "refused: presence_refused — this authenticator's sign counter did not increase"
            " (a cloned key?)"
        ), said
        # Next to the control that asked: the feedback box follows #enable-eval's row.
        assert await options.evaluate(
            """() => document.getElementById('enable-eval').closest('.buttons')
              .nextElementSibling?.id === 'policy-feedback'"""
        )
        assert _trust(browser) == before and gate.current().policy.eval is False
        await options.locator("#enable-eval").scroll_into_view_if_needed()
        await options.screenshot(path=str(shots / "options-refused-tap.png"))

        # -- `tabwarden kill` in a terminal: the popup turns red, no reload ----------------
        await popup.wait_for_function(
            "() => document.getElementById('indicator')?.dataset.state === 'connected'",
            timeout=WAIT_MS,
        )
        audit_rows = await options.evaluate(
            "() => document.querySelectorAll('#audit tbody tr').length"
        )
        _cli(browser, "kill")
        await popup.wait_for_function(
            "() => document.getElementById('indicator')?.dataset.state === 'killed'",
            timeout=WAIT_MS,
        )
        assert await popup.text_content("#state-word") == "Kill switch engaged"
        assert await popup.is_hidden("#kill")
        red = await popup.evaluate(
            "() => getComputedStyle(document.querySelector('#indicator .dot')).backgroundColor"
        )
        assert red == "rgb(217, 48, 37)", red
        await popup.screenshot(path=str(shots / "popup-killed-from-terminal.png"))
        # ...and the options page, open all along: the switch and the audited kill.
        await options.wait_for_function(
            """(rows) => document.getElementById('killed')?.textContent === 'engaged'
              && document.querySelectorAll('#audit tbody tr').length > rows""",
            arg=audit_rows,
            timeout=WAIT_MS,
        )

        # -- `tabwarden revoke client demo`: the client leaves the options page ------------
        _cli(browser, "revoke", "client", "demo")
        await options.wait_for_function(
            "() => !(document.getElementById('clients-paired')?.textContent || '')"
            ".includes('demo')",
            timeout=WAIT_MS,
        )
        await options.locator("#clients-section").scroll_into_view_if_needed()
        await options.screenshot(path=str(shots / "options-client-revoked.png"))
        assert [c.label for c in gate.current().paired_clients] == []
