"""Two browsers of one person, for real: two Chromium profiles (labels ``chromium`` and
``chrome``), each with its own host launched through its own manifest, sharing one trust record.

Once the first browser holds a credential, the one-time code alone cannot add the second: the
options page must first get an assertion from an enrolled credential (here: Chrome's virtual
authenticator standing in for a security key that holds it). A credential made in the other
profile is refused — as an approval, and as a tap for this browser — with nothing changed. And a
browser without an authenticator pairs window-only, shown as software confirmation, and then
approves a new origin in the confirm window."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust import store
from tabwarden.trust.gate import TrustGate
from tests.browser.harness import (
    chromium,
    confirm_page,
    extension_connected,
    launched,
    mcp_client,
    options_status,
    pair_options_page,
    press,
    trust_this_process,
)
from tests.browser.webauthn import add_authenticator, copy_credentials

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

OPTIONS = f"chrome-extension://{EXTENSION_ID}/options.html"

# The attacker's page script: pair with the code, and "approve" with a credential this profile
# made itself (the approval options' allowCredentials swapped for it).
PAIR_WITH_OWN_APPROVAL = """async (code) => {
  const begun = await chrome.runtime.sendMessage({type: "pair_begin", code});
  if (!begun.ok || !begun.approval) return {stage: "begin", begun};
  const created = await navigator.credentials.create({publicKey: \
PublicKeyCredential.parseCreationOptionsFromJSON(begun.options)});
  const mine = created.toJSON();
  const opts = {...begun.approval.options, allowCredentials: \
[{type: "public-key", id: mine.id}]};
  const got = await navigator.credentials.get({publicKey: \
PublicKeyCredential.parseRequestOptionsFromJSON(opts)});
  return await chrome.runtime.sendMessage({type: "pair_complete", challengeId: \
begun.challengeId, response: mine,
    approval: {challengeId: begun.approval.challengeId, response: got.toJSON()}});
}"""

# The attacker's page script: a tap for this browser, answered by another profile's credential.
TAP_WITH_FOREIGN_CREDENTIAL = """async (credentialId) => {
  const detail = '{"eval":true}';
  const begun = await chrome.runtime.sendMessage({type: "presence_begin", action: \
"policy.widen", detail});
  if (!begun.ok) return {stage: "begin", begun};
  const opts = {...begun.options, allowCredentials: \
[{type: "public-key", id: credentialId}]};
  const got = await navigator.credentials.get({publicKey: \
PublicKeyCredential.parseRequestOptionsFromJSON(opts)});
  return await chrome.runtime.sendMessage({type: "presence_complete", challengeId: \
begun.challengeId,
    action: "policy.widen", detail, response: got.toJSON()});
}"""


def _set_code(config: Any, code: str) -> None:
    store.set_pairing_code(
        config / "trust.json", hashlib.sha256(code.encode()).hexdigest(), int(time.time()) + 600
    )


def _browsers(gate: TrustGate) -> dict[str, int]:
    return {b.label: len(b.credentials) for b in gate.current().browsers}


def _grants(config: Any) -> Any:
    """The parts of trust.json a refused pairing or tap must leave alone."""
    doc = json.loads((config / "trust.json").read_bytes())
    return doc["browsers"], doc["policy"], doc["clients"]


@pytest.fixture
def second(browser: ThrowawayBrowser) -> Iterator[ThrowawayBrowser]:
    with ThrowawayBrowser(label="chrome", shared_config=browser.config) as b:
        b.install_host()
        yield b


@pytest.mark.promise("BP-03")
async def test_a_second_browser_needs_an_enrolled_credential_and_a_foreign_one_is_refused(
    browser: ThrowawayBrowser, second: ThrowawayBrowser
) -> None:
    config = browser.config
    trust_this_process(browser, [])
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})

    async with (
        chromium(browser) as ctx_a,
        mcp_client(browser) as agent_a,
        chromium(second) as ctx_b,
        mcp_client(second) as agent_b,
    ):
        await extension_connected(agent_a)
        await extension_connected(agent_b)

        # Browser A pairs with the code and its authenticator.
        page_a = await ctx_a.new_page()
        await page_a.goto(OPTIONS)
        cdp_a, auth_a = await add_authenticator(ctx_a, page_a)
        _set_code(config, "first-code")
        await pair_options_page(page_a, "first-code")
        assert (await options_status(page_a, "paired")).startswith("paired")
        assert _browsers(gate) == {"chromium": 1}
        [cred_a] = gate.current().browsers[0].credentials

        # Browser B holds the code but no enrolled credential: refused, nothing added.
        page_b = await ctx_b.new_page()
        await page_b.goto(OPTIONS)
        cdp_b, auth_b = await add_authenticator(ctx_b, page_b)
        _set_code(config, "second-code")
        before = _grants(config)
        await pair_options_page(page_b, "second-code")
        status = await options_status(page_b, "refused")
        assert status.startswith("refused: presence_refused (no enrolled credential approved")
        assert _grants(config) == before and _browsers(gate) == {"chromium": 1}

        # An attacker script in B "approves" with a credential B's own profile made: refused.
        _set_code(config, "attack-code")
        before = _grants(config)
        answer = await page_b.evaluate(PAIR_WITH_OWN_APPROVAL, "attack-code")
        assert answer == {"ok": False, "code": "presence_refused", "reason": "not_enrolled"}, answer
        assert _grants(config) == before and _browsers(gate) == {"chromium": 1}

        # The person brings the authenticator enrolled for A (a security key): B pairs.
        await cdp_b.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": auth_b})
        key_b, key_b_id = await copy_credentials(cdp_a, auth_a, ctx_b, page_b)
        _set_code(config, "third-code")
        await page_b.reload()
        await pair_options_page(page_b, "third-code")
        assert (await options_status(page_b, "paired")).startswith("paired with chrome")
        assert _browsers(gate) == {"chromium": 1, "chrome": 1}
        [a_now] = [b for b in gate.current().browsers if b.label == "chromium"][0].credentials
        assert a_now.sign_count > cred_a.sign_count  # the approval's counter was stored
        [cred_b] = [b for b in gate.current().browsers if b.label == "chrome"][0].credentials
        audit = [json.loads(line) for line in (config / "audit.jsonl").read_text().splitlines()]
        assert any(
            e["event"] == "browser_pair"
            and e.get("browser") == "chrome"
            and e["decision"] == "granted"
            and e.get("approved_by") == cred_a.credential_id
            for e in audit
        )

        # A tap for browser A answered by browser B's credential (copied into A's page, as if
        # the attacker had it there): the host refuses it, nothing changes.
        held = (await key_b.send("WebAuthn.getCredentials", {"authenticatorId": key_b_id}))[
            "credentials"
        ]
        foreign = [c for c in held if _b64url(c["credentialId"]) == cred_b.credential_id]
        assert foreign, "B's enrolled credential is on the key B used"
        await cdp_a.send(
            "WebAuthn.addCredential", {"authenticatorId": auth_a, "credential": foreign[0]}
        )
        before = _grants(config)
        answer = await page_a.evaluate(TAP_WITH_FOREIGN_CREDENTIAL, cred_b.credential_id)
        assert answer == {"ok": False, "code": "presence_refused", "reason": "not_enrolled"}, answer
        assert _grants(config) == before
        assert gate.current().policy.eval is False


def _b64url(standard_b64: str) -> str:
    """CDP gives credential ids in standard base64; the record keeps base64url without padding."""
    return standard_b64.replace("+", "-").replace("/", "_").rstrip("=")


@pytest.mark.promise("BP-04")
async def test_a_browser_without_an_authenticator_pairs_window_only_and_confirms_in_the_window(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.config
    trust_this_process(browser, [])
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})

    async with launched(browser) as (context, agent):
        page = await context.new_page()
        await page.goto(OPTIONS)  # no virtual authenticator at all: this browser has none
        _set_code(config, "window-code")
        await page.check("#window-only")
        await pair_options_page(page, "window-code")
        assert (
            await options_status(page, "paired")
            == "paired with chromium, no authenticator (software confirmation)"
        )
        [paired] = gate.current().browsers
        assert paired.label == "chromium" and paired.window_only and paired.credentials == ()
        assert "no authenticator: confirmations are a click in a window" in (
            await page.text_content("#pairing") or ""
        )
        await page.reload()
        await page.wait_for_function(
            "() => (document.getElementById('enrolled')?.textContent || '')"
            ".startsWith('none: confirmations are a click')"
        )
        audit = [json.loads(line) for line in (config / "audit.jsonl").read_text().splitlines()]
        assert any(
            e["event"] == "browser_pair" and e["path"] == "window" and e["decision"] == "granted"
            for e in audit
        )

        # Its confirmations are the window: a new origin is approved by a click there.
        opening = asyncio.create_task(agent.call_tool("tab_open", {"url": f"{site}/"}))
        await press(await confirm_page(context), "#allow")
        opened = await opening
        assert not opened.is_error, opened.content
        assert gate.current().policy.origins == (site,)
