"""The host's WebAuthn verification core against real Chromium: an extension page calls
navigator.credentials.create()/get() with the options `trust.presence` made, answered by Chrome's
CDP virtual authenticator, and the host verifies what Chrome really sends (rpIdHash of the
extension origin, clientData origin without a trailing slash, counters). No options page yet:
any page of our extension is the same origin and secure context."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust.presence import (
    PresenceRefused,
    begin_assertion,
    begin_registration,
    complete_assertion,
    complete_registration,
)
from tests.browser.harness import chromium
from tests.browser.webauthn import add_authenticator

pytestmark = [pytest.mark.browser, pytest.mark.pooled]

CREATE = """async (options) => {
  const cred = await navigator.credentials.create({publicKey: \
PublicKeyCredential.parseCreationOptionsFromJSON(options)});
  return cred.toJSON();
}"""
GET = """async (options) => {
  const cred = await navigator.credentials.get({publicKey: \
PublicKeyCredential.parseRequestOptionsFromJSON(options)});
  return cred.toJSON();
}"""


def _public(options: dict[str, Any]) -> dict[str, Any]:
    public: dict[str, Any] = options.get("publicKey", options)
    return public


@pytest.mark.promise("BP-02")
async def test_registration_and_assertions_from_a_real_virtual_authenticator(
    browser: ThrowawayBrowser,
) -> None:
    async with chromium(browser) as context:
        page = await context.new_page()
        await page.goto(f"chrome-extension://{EXTENSION_ID}/confirm.html?id=webauthn-test")
        cdp, added_id = await add_authenticator(context, page)

        now = int(time.time())
        options, challenge = begin_registration("chromium", user_name="tabwarden", now=now)
        response = await page.evaluate(CREATE, json.loads(json.dumps(_public(options))))
        credential = complete_registration(challenge, response, now=now)
        assert credential.path == "webauthn"

        # A tap for one action verifies once, with a rising counter.
        options, challenge = begin_assertion("unkill", "", "chromium", [credential], now=now)
        answer = await page.evaluate(GET, json.loads(json.dumps(_public(options))))
        outcome = complete_assertion(
            challenge,
            answer,
            action="unkill",
            detail="",
            browser_label="chromium",
            credentials=[credential],
            now=now,
        )
        assert outcome.user_verified
        assert (
            outcome.new_sign_count > credential.sign_count
            or outcome.new_sign_count == credential.sign_count == 0
        )

        # The same real answer, replayed for another action, or late, is refused.
        with pytest.raises(PresenceRefused) as other_action:
            complete_assertion(
                challenge,
                answer,
                action="policy.widen",
                detail="",
                browser_label="chromium",
                credentials=[credential],
                now=now,
            )
        assert "action" in other_action.value.reason
        with pytest.raises(PresenceRefused):
            complete_assertion(
                challenge.mark_used(),
                answer,
                action="unkill",
                detail="",
                browser_label="chromium",
                credentials=[credential],
                now=now,
            )
        with pytest.raises(PresenceRefused):
            complete_assertion(
                challenge,
                answer,
                action="unkill",
                detail="",
                browser_label="chromium",
                credentials=[credential],
                now=now + 3600,
            )

        # A user-verification-less authenticator cannot satisfy a UV-required tap.
        await cdp.send(
            "WebAuthn.setUserVerified", {"authenticatorId": added_id, "isUserVerified": False}
        )
        options, challenge = begin_assertion(
            "unkill", "", "chromium", [credential], now=now, uv_required=True
        )
        with pytest.raises(PlaywrightError, match="NotAllowedError"):  # Chrome itself refuses
            await page.evaluate(GET, json.loads(json.dumps(_public(options))))
