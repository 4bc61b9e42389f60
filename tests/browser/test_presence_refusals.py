"""Refused taps in real Chromium, answered by Chrome's virtual authenticator: a replayed
assertion, an assertion made for another action, a cloned authenticator whose sign counter
went back, and a stale challenge. A script on the options page plays the attacker (it can send
anything the page can); each attempt is refused and trust.json stays byte-identical. (Wrong and
reused codes: test_browser_pairing.py; another profile's credential: test_second_browser.py; UV
absent: test_presence_taps.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tests.browser.harness import policy_status
from tests.browser.paired import paired_options_page, provision_for_pairing

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


# Helpers the attacker script uses: begin a tap, answer a challenge, complete with anything.
HELPERS = """
  const send = (m) => chrome.runtime.sendMessage(m);
  const begin = (action, detail) => send({type: "presence_begin", action, detail});
  const answer = async (begun) => (await navigator.credentials.get(
    {publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(begun.options)})).toJSON();
  const complete = (challengeId, action, detail, response) =>
    send({type: "presence_complete", challengeId, action, detail, response});
"""

TAP_THEN_REPLAY = (
    "async () => {"
    + HELPERS
    + """
  const detail = '{"upload":true}';
  const first = await begin("policy.widen", detail);
  const response = await answer(first);
  const ok = await complete(first.challengeId, "policy.widen", detail, response);
  const again = await complete(first.challengeId, "policy.widen", detail, response);
  const fresh = await begin("policy.widen", detail);
  const replayed = await complete(fresh.challengeId, "policy.widen", detail, response);
  return {ok, again, replayed};
}"""
)

ANSWER_FOR_ANOTHER_ACTION = (
    "async () => {"
    + HELPERS
    + """
  const unkill = await begin("unkill", "");
  const forUnkill = await answer(unkill);
  const detail = '{"eval":true}';
  const widen = await begin("policy.widen", detail);
  return await complete(widen.challengeId, "policy.widen", detail, forUnkill);
}"""
)


def _trust(config: Path) -> bytes:
    return (config / "trust.json").read_bytes()


@pytest.mark.promise("BP-09")
async def test_replayed_cross_action_and_cloned_counter_taps_are_refused(
    browser: ThrowawayBrowser,
) -> None:
    config = browser.config
    gate = provision_for_pairing(browser)

    async with paired_options_page(browser) as paired:
        page, cdp, authenticator = paired.page, paired.cdp, paired.authenticator
        # One real tap works; replaying its assertion (same or a fresh challenge) does not.
        outcome = await page.evaluate(TAP_THEN_REPLAY)
        assert outcome["ok"]["ok"] is True, outcome
        assert outcome["again"] == {"ok": False, "code": "bad_request"}, (
            outcome
        )  # the worker's single use
        assert outcome["replayed"] == {
            "ok": False,
            "code": "presence_refused",
            "reason": "wrong_request",
        }, outcome  # the host's
        assert gate.current().policy.upload is True
        after_upload = _trust(config)

        # An assertion made for "unkill" presented for a policy widening: refused by the host.
        assert await page.evaluate(ANSWER_FOR_ANOTHER_ACTION) == {
            "ok": False,
            "code": "presence_refused",
            "reason": "wrong_request",
        }
        assert _trust(config) == after_upload and gate.current().policy.eval is False

        # A cloned authenticator: the credential comes back with the counter it had before the
        # last tap. The host sees the counter not rising and refuses; nothing changes.
        [cred] = (await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator}))[
            "credentials"
        ]
        await page.click("#enable-eval")
        assert await policy_status(page, "done") == "done: policy.widen"
        assert gate.current().policy.eval is True
        await cdp.send(
            "WebAuthn.removeCredential",
            {"authenticatorId": authenticator, "credentialId": cred["credentialId"]},
        )
        await cdp.send(
            "WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": cred}
        )
        await page.click("#restrict-eval")  # narrowing: free, so the counter plays no part
        assert await policy_status(page, "done") == "done: policy_restrict"
        before = _trust(config)
        await page.click("#enable-eval")
        assert (await policy_status(page, "refused")).startswith("refused: presence_refused")
        assert _trust(config) == before and gate.current().policy.eval is False


STALE_TAP = (
    "async (waitMs) => {"
    + HELPERS
    + """
  const detail = '{"eval":true}';
  const begun = await begin("policy.widen", detail);
  await new Promise((r) => setTimeout(r, waitMs));
  return await complete(begun.challengeId, "policy.widen", detail, await answer(begun));
}"""
)


@pytest.mark.promise("BP-09")
async def test_a_stale_challenge_is_refused_in_real_chromium(
    browser: ThrowawayBrowser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host started by Chrome runs with a ceremony TTL shortened to 10 s (the environment may
    only shorten it); a tap answered after 11 s is refused and nothing changes."""
    monkeypatch.setenv("TABWARDEN_CHALLENGE_TTL", "10")
    config = browser.config
    gate = provision_for_pairing(browser)

    async with paired_options_page(browser) as paired:
        before = _trust(config)
        outcome = await paired.page.evaluate(STALE_TAP, 11_000)
        assert outcome == {
            "ok": False,
            "code": "presence_refused",
            "reason": "challenge_stale",
        }, outcome
        assert _trust(config) == before and gate.current().policy.eval is False
        # The same tap, answered at once, works: it was the wait that was refused.
        assert (await paired.page.evaluate(STALE_TAP, 0))["ok"] is True
        assert gate.current().policy.eval is True
