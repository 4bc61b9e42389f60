"""What a tap authorises, for real: after pairing the browser (code + credential), the options
page widens policy with a WebAuthn assertion from Chrome's virtual authenticator — eval then works
where it was refused — narrows for free, and releases the kill switch with a tap."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import store
from tests.browser.harness import confirm_page, confirm_page_presence, policy_status, press, shows
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.browser.webauthn import copy_credentials
from tests.fakes import tool_error

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


def _trust(config: Path) -> bytes:
    return (config / "trust.json").read_bytes()


@pytest.mark.promise("TR-14", "PR-08", "BP-09", "BP-12", "BP-15")
async def test_widen_with_a_tap_narrow_for_free_and_unkill_with_a_tap(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.config
    gate = provision_for_pairing(browser, [site])

    async with paired_options_page(browser) as paired:
        context, agent, page = paired.context, paired.agent, paired.page
        cdp, authenticator = paired.cdp, paired.authenticator
        assert gate.current().browsers[0].credentials[0].uv is True  # verified at enrolment

        tab = (await agent.call_tool("tab_open", {"url": f"{site}/"})).structured_content["tab"][
            "id"
        ]
        refused = await agent.call_tool("page_eval", {"tabId": tab, "code": "1+1"})
        assert (tool_error(refused) or {}).get("code") == "policy_denied"

        # Widen with a tap: eval now works (and is still confirmed in the window).
        await page.reload()
        await page.click("#enable-eval")
        assert await policy_status(page, "done") == "done: policy.widen"
        assert gate.current().policy.eval is True
        evaluating = asyncio.create_task(
            agent.call_tool("page_eval", {"tabId": tab, "code": "20+22"})
        )
        await press(await confirm_page(context), "#allow")
        result = await evaluating
        assert not result.is_error, result.content
        assert result.structured_content["result"] == 42

        # Narrow for free: no tap, and eval is refused again.
        await page.click("#restrict-eval")
        assert await policy_status(page, "done") == "done: policy_restrict"
        assert gate.current().policy.eval is False
        again = await agent.call_tool("page_eval", {"tabId": tab, "code": "1"})
        assert (tool_error(again) or {}).get("code") == "policy_denied"

        # Kill for free; unkill only with a tap.
        await page.click("#kill")
        await page.wait_for_function(
            "() => (document.getElementById('killed')?.textContent || '').includes('engaged')"
        )
        assert gate.current().killed
        assert (tool_error(await agent.call_tool("tab_list", {})) or {}).get("code") == "killed"
        # The authenticator stops verifying the person (isUserVerified: false): a tap with
        # presence only is refused for a credential that verified at enrolment.
        killed_record = _trust(config)
        await cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": authenticator, "isUserVerified": False},
        )
        await page.click("#unkill")
        assert (await policy_status(page, "refused")).startswith("refused")
        assert _trust(config) == killed_record and gate.current().killed
        await cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": authenticator, "isUserVerified": True},
        )
        await page.click("#unkill")
        assert await policy_status(page, "done") == "done: unkill"
        assert not gate.current().killed
        assert not (await agent.call_tool("tab_list", {})).is_error

        # The options page shows the audit log: the tap-authorised grants, with their path.
        await page.click("#audit-refresh")
        await page.wait_for_function(
            "() => (document.getElementById('audit')?.textContent || '')"
            ".includes('Kill switch released')",
            timeout=30_000,
        )
        audit_text = await page.text_content("#audit") or ""
        # Events in words (audit-view.js EVENT_WORDS), the path as "Confirmed by".
        assert "Permissions widened" in audit_text and "webauthn" in audit_text


@pytest.mark.promise("PR-04", "PR-08", "PR-09", "BP-13")
async def test_presence_confirm_eval_needs_a_tap_and_a_client_pairs_by_tap(
    browser: ThrowawayBrowser, site: str
) -> None:
    from tabwarden.bridge.spawner import Spawner, remember_spawner
    from tabwarden.trust.gate import host_key_store
    from tabwarden.trust.policy import apply_set

    config = browser.config
    gate = provision_for_pairing(browser, [site])
    key = host_key_store(config, "file").load()
    assert key is not None
    # The person enabled eval in presence-confirm mode (as `tabwarden policy set` would).
    store.set_baseline(
        config / "trust.json",
        key,
        apply_set(gate.current().policy, {"eval": True, "presenceConfirm": True}).to_json(),
        int(time.time()),
    )
    other = "/bin/sh"
    with open(other, "rb") as image:
        other_sha = hashlib.sha256(image.read()).hexdigest()
    remember_spawner(
        config, Spawner(pid=1, exe=other, sha256=other_sha, create_time=0.0), time.time()
    )

    async with paired_options_page(browser) as paired:
        context, agent, options = paired.context, paired.agent, paired.page
        cdp, authenticator_id = paired.cdp, paired.authenticator

        # A client paired from the options page with a tap (a grant the record signs).
        await options.wait_for_selector("#pair-client-0")
        await options.click("#pair-client-0")
        await options.wait_for_function(
            "() => (document.getElementById('clients-status')?.textContent || '')"
            ".startsWith('done')",
            timeout=30_000,
        )
        assert any(
            c.sha256 == other_sha and c.path == "webauthn" for c in gate.current().paired_clients
        )

        tab = (await agent.call_tool("tab_open", {"url": f"{site}/"})).structured_content["tab"][
            "id"
        ]
        # eval in presence-confirm mode: the window asks for a tap, not a click.
        evaluating = asyncio.create_task(
            agent.call_tool("page_eval", {"tabId": tab, "code": "6*7"})
        )
        window = await confirm_page_presence(context)
        await shows(window, "6*7")
        assert not await window.is_visible("#allow")
        # The credential lives on the options page's authenticator: copy it (with its current
        # counter) to this window's, since virtual authenticators are per page.
        await copy_credentials(cdp, authenticator_id, context, window)
        await press(window, "#tap")
        result = await evaluating
        assert not result.is_error, result.content
        assert result.structured_content["result"] == 42

        # Revoking a paired client from the options page is free: no tap, and it is gone.
        await cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator_id})
        await options.click("button[aria-label='Revoke sh']")
        await options.wait_for_function(
            "() => (document.getElementById('clients-status')?.textContent || '')"
            ".startsWith('done: revoked sh')",
            timeout=30_000,
        )
        assert not any(c.sha256 == other_sha for c in gate.current().paired_clients)
        assert not (await agent.call_tool("tab_list", {})).is_error  # the other client is untouched


@pytest.mark.promise("PR-08", "BP-14")
async def test_an_enrolled_browser_approves_a_new_origin_with_a_tap_not_a_click(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.config
    gate = provision_for_pairing(browser, [site])
    other = site.replace("127.0.0.1", "localhost")

    async with paired_options_page(browser) as paired:
        context, agent = paired.context, paired.agent
        cdp, authenticator_id = paired.cdp, paired.authenticator

        opening = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{other}/"}))
        window = await confirm_page_presence(context)
        await shows(window, other)
        assert not await window.is_visible("#allow")  # never downgraded to a click
        wcdp = await context.new_cdp_session(window)
        await wcdp.send("WebAuthn.enable")
        await copy_credentials(cdp, authenticator_id, context, window)
        await press(window, "#tap")
        opened = await opening
        assert not opened.is_error, opened.content
        assert other in gate.current().policy.origins
        audit = [json.loads(line) for line in (config / "audit.jsonl").read_text().splitlines()]
        assert any(e.get("event") == "policy_set" and e.get("path") == "webauthn" for e in audit)
