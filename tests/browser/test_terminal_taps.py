"""Two factors at the terminal (a program can type a phrase), in real Chromium: once the browser
holds an enrolled authenticator, `tabwarden unkill` typed at a real terminal also asks for a tap, in
the extension's own confirm window, and verifies it itself.

The person's path: the phrase, then a tap of Chrome's virtual authenticator in that window →
released, audited with both proofs' paths, the counter stored. The attacker's path with the same
browser running: a program that types the phrase at its own pty cannot touch the key, so the
window goes unanswered (closed) → refused, trust.json byte-identical, the refusal audited."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli import ceremony
from tabwarden.cli.browser import ThrowawayBrowser
from tabwarden.trust import operations
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.operations import TrustContext
from tests.browser.harness import confirm_page_presence, press, shows, widen
from tests.browser.paired import Paired, paired_options_page, provision_for_pairing
from tests.browser.webauthn import add_authenticator, copy_credentials
from tests.cli.world import plain_binary
from tests.pty_cli import PROMPT, Pty, spawn_cli

pytestmark = [pytest.mark.browser, pytest.mark.pooled]


def _audit(config: Path) -> list[dict[str, Any]]:
    lines = (config / "audit.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _sign_count(config: Path) -> int:
    [browser] = json.loads((config / "trust.json").read_bytes())["browsers"]
    [credential] = browser["credentials"]
    return int(credential["signCount"])


async def _typed(env: dict[str, str], args: tuple[str, ...], phrase: str) -> Pty:
    """`tabwarden <args>` on a pty that is its controlling terminal, ``phrase`` typed at its
    prompt."""
    child = spawn_cli(env, *args)
    await asyncio.to_thread(child.expect, PROMPT)
    child.send(phrase + "\n")
    return child


async def _typed_unkill(env: dict[str, str]) -> Pty:
    """`tabwarden unkill` on a pty that is its controlling terminal, the phrase typed."""
    return await _typed(env, ("unkill",), ceremony.phrase_for("unkill"))


async def _window(context: Any, child: Pty) -> Any:
    """The confirm window the terminal's request opened (or the terminal's words, if none)."""
    try:
        return await confirm_page_presence(context)
    except Exception:
        _, output = await asyncio.to_thread(child.finish, 10.0)
        raise AssertionError(f"no confirm window; the terminal said {output!r}") from None


@pytest.mark.promise("PR-02")
async def test_unkill_at_the_terminal_needs_the_phrase_and_a_tap_in_the_extension_window(
    browser: ThrowawayBrowser, site: str
) -> None:
    config = browser.config
    provision_for_pairing(browser, [site])
    gate = TrustGate(browser.env)
    ctx = TrustContext.for_gate(gate)

    async with paired_options_page(browser) as paired:
        context, agent = paired.context, paired.agent
        operations.kill(ctx, "test", int(time.time()))
        assert gate.current().killed

        # The attacker: the phrase typed at its own pty, and no one to touch the key.
        before = (config / "trust.json").read_bytes()
        audited = len(_audit(config))
        child = await _typed_unkill(browser.env)
        window = await _window(context, child)
        await shows(window, "Release the kill switch")
        assert not await window.is_visible("#allow")  # a click can never answer it
        await window.close()  # unanswered: the window goes away without a tap
        status, output = await asyncio.to_thread(child.finish)
        assert status != 0, output
        assert b"error[confirm_denied]" in output, output
        assert (config / "trust.json").read_bytes() == before
        assert gate.current().killed
        refusals = [(e["event"], e["decision"], e["path"]) for e in _audit(config)[audited:]]
        assert refusals == [("unkill", "refused", "terminal")], refusals

        # The person: the phrase, then a tap of the enrolled key in the window.
        counter = _sign_count(config)
        child = await _typed_unkill(browser.env)
        window = await _window(context, child)
        await shows(window, "Release the kill switch")
        await shows(window, "your terminal")
        # The credential lives on the options page's authenticator (virtual authenticators
        # are per page): copy it, with its counter, to this window's.
        await copy_credentials(paired.cdp, paired.authenticator, context, window)
        await press(window, "#tap")
        status, output = await asyncio.to_thread(child.finish)
        assert status == 0, output
        assert b"touch your security key in the tabwarden window of chromium" in output
        assert b"kill switch released" in output
        assert not gate.current().killed
        entry = _audit(config)[-1]
        assert (entry["event"], entry["decision"], entry["path"]) == (
            "unkill",
            "granted",
            "webauthn",
        )
        assert entry["paths"] == ["terminal", "webauthn"]
        assert _sign_count(config) > counter  # stored: that assertion cannot serve again
        listed = await agent.call_tool("tab_list", {})
        assert not listed.is_error, listed.content  # served again


async def _key_in(window: Any, paired: Paired, count: int) -> None:
    """Put the enrolled credential in ``window``'s own authenticator (they are per page) with
    the counter the record holds now, as the one physical key would have it."""
    held = await paired.cdp.send(
        "WebAuthn.getCredentials", {"authenticatorId": paired.authenticator}
    )
    target, target_id = await add_authenticator(paired.context, window)
    for credential in held["credentials"]:
        await target.send(
            "WebAuthn.addCredential",
            {"authenticatorId": target_id, "credential": {**credential, "signCount": count}},
        )


async def _tapped(
    paired: Paired, browser: ThrowawayBrowser, args: tuple[str, ...], phrase: str
) -> bytes:
    """``tabwarden ARGS`` at a real terminal: the phrase, then a tap in the window it opens."""
    config = browser.config
    child = await _typed(browser.env, args, phrase)
    window = await _window(paired.context, child)
    await _key_in(window, paired, _sign_count(config))
    await press(window, "#tap")
    status, output = await asyncio.to_thread(child.finish)
    assert status == 0, output
    return output


@pytest.mark.promise("PR-02")
async def test_policy_set_pair_client_and_pair_browser_at_the_terminal_take_a_tap_too(
    browser: ThrowawayBrowser, site: str
) -> None:
    from tabwarden.cli.commands import reenrol_phrase

    config = browser.config
    provision_for_pairing(browser, [site])
    gate = TrustGate(browser.env)

    async with paired_options_page(browser) as paired:
        counter = _sign_count(config)
        await _tapped(
            paired, browser, ("policy", "set", "clickGraceSeconds=45"),
            ceremony.phrase_for("policy set"),
        )  # fmt: skip
        assert gate.current().policy.click_grace_seconds == 45
        output = await _tapped(
            paired, browser, ("pair-client", "--exe", plain_binary(), "--label", "sleeper"),
            ceremony.phrase_for("pair-client"),
        )  # fmt: skip
        assert b"paired client 'sleeper'" in output
        assert any(
            c.label == "sleeper" and c.path == "webauthn" for c in gate.current().paired_clients
        )
        output = await _tapped(
            paired, browser, ("pair", "--browser", "brave"), reenrol_phrase("brave")
        )
        assert b"one-time code for browser 'brave'" in output
        granted = [e for e in _audit(config) if e["decision"] == "granted"][-3:]
        assert [(e["event"], e["path"], e["paths"]) for e in granted] == [
            ("policy_set", "webauthn", ["terminal", "webauthn"]),
            ("pair_client", "webauthn", ["terminal", "webauthn"]),
            ("browser_code", "webauthn", ["terminal", "webauthn"]),
        ]
        assert _sign_count(config) >= counter + 3  # each tap's counter stored


async def test_a_widening_policy_rollback_takes_the_phrase_and_a_tap_and_lands_the_older_policy(
    browser: ThrowawayBrowser, site: str
) -> None:
    """`tabwarden policy rollback 1` back to a wider baseline, with an enrolled authenticator:
    the window unanswered (no tap) refuses it with trust.json byte-identical; the phrase and a
    tap roll back, the record's policy is the older baseline's, audited with both paths."""
    config = browser.config
    provision_for_pairing(browser, [site])
    gate = TrustGate(browser.env)

    async with paired_options_page(browser) as paired:
        # Two baselines signed as `policy set` would: the wider one, then a narrower one.
        widen(browser, clickGraceSeconds=45)
        widen(browser, clickGraceSeconds=10)
        assert gate.current().policy.click_grace_seconds == 10

        # Absent: the phrase typed, the window closed without a tap.
        before = (config / "trust.json").read_bytes()
        audited = len(_audit(config))
        rollback = ("policy", "rollback", "1")
        child = await _typed(browser.env, rollback, ceremony.phrase_for("policy set"))
        window = await _window(paired.context, child)
        await shows(window, "Roll the policy back 1 step")
        assert not await window.is_visible("#allow")  # a click can never answer it
        await window.close()
        status, output = await asyncio.to_thread(child.finish)
        assert status != 0, output
        assert b"error[confirm_denied]" in output, output
        assert (config / "trust.json").read_bytes() == before
        assert gate.current().policy.click_grace_seconds == 10
        refusals = [(e["event"], e["decision"], e["path"]) for e in _audit(config)[audited:]]
        assert refusals == [("policy_rollback", "refused", "terminal")], refusals

        # The person: the phrase, then the tap.
        counter = _sign_count(config)
        output = await _tapped(
            paired, browser, ("policy", "rollback", "1"), ceremony.phrase_for("policy set")
        )
        assert b"policy rolled back" in output
        assert gate.current().policy.click_grace_seconds == 45
        entry = _audit(config)[-1]
        assert (entry["event"], entry["decision"], entry["path"], entry["paths"]) == (
            "policy_rollback",
            "granted",
            "webauthn",
            ["terminal", "webauthn"],
        )
        assert entry["steps"] == 1
        assert _sign_count(config) > counter  # stored: that assertion cannot serve again
