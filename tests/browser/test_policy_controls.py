"""The options page's grace period, confirmation timeout and presenceConfirm controls, for real:
after pairing the browser (code + credential on Chrome's virtual authenticator), a change that
narrows (fewer seconds, presenceConfirm on) is a free policy_restrict — it works with no
authenticator at all — and a change that widens (more seconds, presenceConfirm off) lands in the
signed policy only with a tap; a tap the authenticator fails, bad input and an equal value leave
trust.json byte-identical. dialogArming the same way: on is a tap, off is free."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust.gate import TrustGate
from tests.browser.paired import paired_options_page, provision_for_pairing
from tests.browser.webauthn import add_authenticator

pytestmark = [pytest.mark.browser, pytest.mark.pooled, pytest.mark.deadline(600)]

#: A tap Chrome itself refused (no verified answer): said next to the button, in words.
NO_ANSWER = (
    "refused: presence_refused — no authenticator answered (cancelled, timed out, or none present)"
)

#: Deadline of each wait on the page; generous, because a tap under CPU load can take seconds.
WAIT_MS = 90_000


def _audit(config: Path) -> list[dict[str, Any]]:
    lines = (config / "audit.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


async def _policy_status(page: Any, prefix: str) -> str:
    await page.wait_for_function(
        "(p) => (document.getElementById('policy-status')?.textContent || '').startsWith(p)",
        arg=prefix,
        timeout=WAIT_MS,
    )
    return str(await page.text_content("#policy-status"))


async def _policy_section_shows_enrolled(page: Any) -> None:
    """Wait for the Policy section's re-render after pairing (options.js refreshes it without
    waiting once pairing is done). Until then, a value typed into a number field can be
    overwritten by that late render, and the set then finds the old value: "unchanged"."""
    await page.wait_for_function(
        "() => (document.getElementById('enrolled')?.textContent || '').startsWith('yes')",
        timeout=WAIT_MS,
    )


async def _act(page: Any, selector: str, prefix: str) -> str:
    """Clear #policy-status, click ``selector`` and wait for a status starting with ``prefix``
    (cleared first so an earlier operation's text can never pass for this one's)."""
    await page.evaluate("() => { document.getElementById('policy-status').textContent = ''; }")
    await page.click(selector)
    return await _policy_status(page, prefix)


async def _field_shows(page: Any, selector: str, value: int) -> None:
    await page.wait_for_function(
        "([s, v]) => document.querySelector(s)?.value === v",
        arg=[selector, str(value)],
        timeout=WAIT_MS,
    )


@pytest.mark.promise("BP-11")
async def test_narrowing_the_timing_keys_is_free_and_widening_needs_a_tap(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.config
    trust = config / "trust.json"
    gate = provision_for_pairing(browser, [site])
    start = gate.current().policy
    timing = ("click_grace_seconds", "confirm_timeout_seconds", "presence_confirm")
    assert tuple(getattr(start, k) for k in timing) == (30, 40, False)

    async with paired_options_page(browser) as paired:
        page, cdp, authenticator = paired.page, paired.cdp, paired.authenticator
        assert gate.current().browsers[0].credentials[0].uv is True
        await _policy_section_shows_enrolled(page)
        await _field_shows(page, "#grace", 30)  # pre-filled from the policy in force
        await _field_shows(page, "#confirm-timeout", 40)
        assert await page.is_disabled("#presence-off")  # presenceConfirm is already off

        # Narrowing is free: with the authenticator gone, no tap could happen at all.
        held = await cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
        credentials = held["credentials"]
        assert len(credentials) == 1
        await cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        audited = len(_audit(config))
        await page.fill("#grace", "10")
        assert await _act(page, "#set-grace", "done") == "done: policy_restrict"
        assert gate.current().policy.click_grace_seconds == 10
        await page.fill("#confirm-timeout", "20")
        assert await _act(page, "#set-timeout", "done") == "done: policy_restrict"
        assert gate.current().policy.confirm_timeout_seconds == 20
        assert await _act(page, "#presence-on", "done") == "done: policy_restrict"
        assert gate.current().policy.presence_confirm is True
        narrowed = _audit(config)[audited:]
        assert [(e["event"], e["decision"], e["changed"]) for e in narrowed] == [
            ("policy_restrict", "narrowed", ["clickGraceSeconds"]),
            ("policy_restrict", "narrowed", ["confirmTimeoutSeconds"]),
            ("policy_restrict", "narrowed", ["presenceConfirm"]),
        ]
        await _field_shows(page, "#grace", 10)
        assert await page.is_disabled("#presence-on")
        assert not await page.is_disabled("#presence-off")

        # Bad input and an equal value are answered by the page; nothing reaches the record.
        before = trust.read_bytes()
        for bad in ("700", "2.5", "-1"):
            await page.fill("#grace", bad)
            refused = await _act(page, "#set-grace", "refused")
            assert refused.startswith("refused: bad_request ("), refused
            assert "from 0 to 600" in refused, refused
        await page.fill("#confirm-timeout", "4")
        refused = await _act(page, "#set-timeout", "refused")
        assert refused.startswith("refused: bad_request (") and "5 to 600" in refused, refused
        await page.fill("#grace", "10")
        unchanged = await _act(page, "#set-grace", "unchanged")
        assert unchanged == (
            "unchanged: No new question on that tab and site after an allowed action for: "
            "already 10 s"
        )
        assert trust.read_bytes() == before

        # The authenticator is back (same credential and counter), but stops verifying the
        # person: a widening tap is refused and trust.json is byte-identical.
        cdp, authenticator = await add_authenticator(paired.context, page)
        for cred in credentials:
            await cdp.send(
                "WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": cred}
            )
        await cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": authenticator, "isUserVerified": False},
        )
        before = trust.read_bytes()
        audited = len(_audit(config))
        await page.fill("#grace", "90")
        # Chrome itself refuses the assertion (the host asks for user verification).
        assert await _act(page, "#set-grace", "refused") == NO_ANSWER
        assert await _act(page, "#presence-off", "refused") == NO_ANSWER
        assert trust.read_bytes() == before
        assert [e for e in _audit(config)[audited:] if e["decision"] != "refused"] == []
        now = gate.current().policy
        assert (now.click_grace_seconds, now.presence_confirm) == (10, True)
        await _field_shows(page, "#grace", 10)  # the field shows the policy in force again

        # With a verified tap each widening lands in the signed policy.
        await cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": authenticator, "isUserVerified": True},
        )
        audited = len(_audit(config))
        await page.fill("#grace", "45")
        assert await _act(page, "#set-grace", "done") == "done: policy.widen"
        assert gate.current().policy.click_grace_seconds == 45
        await page.fill("#confirm-timeout", "120")
        assert await _act(page, "#set-timeout", "done") == "done: policy.widen"
        assert gate.current().policy.confirm_timeout_seconds == 120
        assert await _act(page, "#presence-off", "done") == "done: policy.widen"
        widened = _audit(config)[audited:]
        assert [(e["event"], e["decision"], e["path"], e["changed"]) for e in widened] == [
            ("policy_set", "granted", "webauthn", ["clickGraceSeconds"]),
            ("policy_set", "granted", "webauthn", ["confirmTimeoutSeconds"]),
            ("policy_set", "granted", "webauthn", ["presenceConfirm"]),
        ]
        await _field_shows(page, "#confirm-timeout", 120)

        # Lower it for free, then tap it back to exactly the signed value: the person set
        # that key, so the narrowing goes (it must not stay at 20 behind a "done").
        await page.fill("#grace", "20")
        assert await _act(page, "#set-grace", "done") == "done: policy_restrict"
        await page.fill("#grace", "45")
        assert await _act(page, "#set-grace", "done") == "done: policy.widen"
        assert gate.current().policy.click_grace_seconds == 45

    # A fresh gate reads the record from disk and verifies its signatures: the signed baseline
    # holds the widened values, and no restriction is left narrowing them.
    signed = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}).current().policy
    assert tuple(getattr(signed, k) for k in timing) == (45, 120, False)
    record = json.loads(trust.read_text())["policy"]
    baseline = record["baseline"]["values"]
    keys = ("clickGraceSeconds", "confirmTimeoutSeconds", "presenceConfirm")
    assert tuple(baseline[k] for k in keys) == (45, 120, False)
    assert [r for r in record["restrictions"] if r["key"] in keys] == []


@pytest.mark.promise("H4-45")
async def test_dialog_arming_on_needs_a_tap_and_off_is_free(
    browser: ThrowawayBrowser, site: str
) -> None:
    """Letting an agent arm an answer to a dialog nobody has read is a widening: the options
    page's button lands it in the signed policy only with a tap; turning it off is free."""
    config = browser.config
    trust = config / "trust.json"
    gate = provision_for_pairing(browser, [site])
    assert gate.current().policy.dialog_arming is False

    async with paired_options_page(browser) as paired:
        page, cdp, authenticator = paired.page, paired.cdp, paired.authenticator
        await _policy_section_shows_enrolled(page)
        assert await page.is_disabled("#dialog-arming-off")  # already off
        # A tap that does not verify the person turns nothing on.
        await cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": authenticator, "isUserVerified": False},
        )
        before = trust.read_bytes()
        refused = await _act(page, "#dialog-arming-on", "refused")
        assert refused == NO_ANSWER
        assert trust.read_bytes() == before
        assert gate.current().policy.dialog_arming is False
        await cdp.send(
            "WebAuthn.setUserVerified",
            {"authenticatorId": authenticator, "isUserVerified": True},
        )
        audited = len(_audit(config))
        assert await _act(page, "#dialog-arming-on", "done") == "done: policy.widen"
        assert gate.current().policy.dialog_arming is True
        # Off is free: with the authenticator gone, no tap could happen at all.
        await cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        assert await _act(page, "#dialog-arming-off", "done") == "done: policy_restrict"
        assert gate.current().policy.dialog_arming is False
        entries = _audit(config)[audited:]
        assert [(e["event"], e["decision"], e["changed"]) for e in entries] == [
            ("policy_set", "granted", ["dialogArming"]),
            ("policy_restrict", "narrowed", ["dialogArming"]),
        ]
