"""Re-enrolling a browser for real after `revoke browser`: Chromium's options page
enrols a virtual authenticator, the person revokes the browser (the authenticator is lost —
removed from Chrome), the options page then shows software confirmation. It was the only
authenticator, so ``pair --browser chromium`` with the phrase alone is refused (the record
stays latched); the code that command issues once another authenticator's tap approves it
(written here as the store writes it) enrols a new authenticator through the real host. The
host key, the paired client and the MCP tools carry on throughout."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import operations, store
from tabwarden.trust.audit import AuditLog
from tabwarden.trust.gate import host_key_store
from tabwarden.trust.operations import TerminalPhrase, TrustContext
from tests.browser.harness import CODE, launched, options_status, pair_options_page
from tests.browser.paired import host_fingerprint, options_page, provision_for_pairing
from tests.browser.webauthn import add_authenticator
from tests.fixtures import our_identity

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

NEW_CODE = "5151-7373"


async def _enrolled_text(page: Any, prefix: str) -> str:
    await page.wait_for_function(
        "(p) => (document.getElementById('enrolled')?.textContent || '').startsWith(p)",
        arg=prefix,
        timeout=30_000,
    )
    return str(await page.text_content("#enrolled"))


@pytest.mark.promise("PR-06")
async def test_a_revoked_browser_re_enrols_a_new_authenticator_from_the_options_page(
    browser: ThrowawayBrowser,
) -> None:
    config = browser.root / "config"
    gate = provision_for_pairing(browser)
    fingerprint = host_fingerprint(browser)
    ctx = TrustContext(
        trust_path=config / "trust.json",
        kill_latch=gate.kill_latch,
        load_key=host_key_store(config, "file").load,
        effective=gate.current,
        audit=lambda: AuditLog(config / "audit.jsonl"),
    )

    def credentials() -> list[str]:
        return [c.credential_id for b in gate.current().browsers for c in b.credentials]

    async with launched(browser) as (context, agent):
        page, cdp, lost = await options_page(context)
        await pair_options_page(page, CODE)
        assert (await options_status(page, "paired")).startswith("paired with chromium")
        [old_id] = credentials()
        await _enrolled_text(page, "yes")

        # The authenticator is lost: it leaves Chrome, and the person revokes the browser.
        await cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": lost})
        operations.revoke(ctx, "browser", "chromium", int(time.time()))
        assert credentials() == []
        await page.reload()
        text = await _enrolled_text(page, "no")
        assert "software confirmation" in text and "pair --browser" in text

        # `pair --browser chromium` with the phrase alone: refused, it was the only
        # authenticator and the record stays latched (a same-user program can type a phrase).
        phrase = TerminalPhrase(action="pair --browser")
        before = (config / "trust.json").read_bytes()
        with pytest.raises(operations.SecondFactorLost):
            operations.reissue_browser_code(ctx, phrase, "chromium", NEW_CODE, int(time.time()))
        assert (config / "trust.json").read_bytes() == before
        # What `pair --browser chromium` writes once a tap on another enrolled authenticator
        # approves it (tests/browser/test_terminal_taps.py): a code bound to this browser.
        key = host_key_store(config, "file").load()
        assert key is not None
        store.set_pairing_code(
            config / "trust.json",
            hashlib.sha256(NEW_CODE.encode()).hexdigest(),
            int(time.time()) + 600,
            bind=(key, "chromium"),
        )
        await add_authenticator(context, page)
        await pair_options_page(page, NEW_CODE)
        assert (await options_status(page, "paired")).startswith("paired with chromium")
        [new_id] = credentials()
        assert new_id != old_id
        await page.reload()
        await _enrolled_text(page, "yes (1 credential)")

        # The host key and the client did not move; the agent's tools still work.
        assert (await page.text_content("#fingerprint") or "").strip() == fingerprint
        assert [c.exe for c in gate.current().paired_clients] == [our_identity().exe]
        result = await agent.call_tool("tab_list", {})
        assert not result.is_error, result.content
    audit = [json.loads(line) for line in (config / "audit.jsonl").read_text().splitlines()]
    pairs = [e for e in audit if e["event"] == "browser_pair" and e["decision"] == "granted"]
    assert [e.get("approved_by") for e in pairs] == [None, "terminal"]
