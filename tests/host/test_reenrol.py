"""Re-enrolling a browser after ``revoke browser LABEL`` ("recovery without a reset"),
against real host processes and software authenticators: until it re-enrols, the revoked
browser confirms in the window (software confirmation) and its old credential authorises
nothing; a code from ``pair --browser LABEL`` is bound to that label — another browser
presenting it is refused (and the code is spent), it works once — and for its label it stands
in for an enrolled credential's approval, but only while the label holds no credential.

The codes here are written with ``store.set_pairing_code(..., bind=(key, LABEL))``, what
``operations.reissue_browser_code`` writes; the terminal ceremony around it is
tests/cli/test_cli_ceremonies.py's. A binding is signed: one written into the file by hand, or
moved onto another code, is refused."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.record_file import load
from tests.fakes import FakeBrowser
from tests.fixtures import (
    audit_entries,
    begin_tap,
    browser_grants,
    change_detail,
    complete_tap,
    config_of,
    enrol_via_pairing,
    gate_of,
    host_call,
    refused,
)
from tests.trust import hand_edit, read_json
from tests.trust.softauthn import SoftAuthenticator


@pytest.fixture
def other(runtime_dir: Path) -> Iterator[FakeBrowser]:
    """A second browser (label "other") sharing the first one's trust record."""
    browser = FakeBrowser(runtime_dir, label="other")
    try:
        browser.wait_socket()
        browser.hello()
        yield browser
    finally:
        browser.close()


def _bound_code(config: Path, key: HostKey, code: str, label: str) -> None:
    store.set_pairing_code(
        config / "trust.json",
        hashlib.sha256(code.encode()).hexdigest(),
        int(time.time()) + 600,
        bind=(key, label),
    )


def _revoke(config: Path, label: str) -> None:
    store.revoke(config / "trust.json", "browser", label, int(time.time()))


def _begin(browser: FakeBrowser, code: str) -> dict[str, Any]:
    reply = host_call(browser, "pair_begin", {"code": code})
    assert reply["ok"] is True, reply
    result: dict[str, Any] = reply["result"]
    return result


def _register(browser: FakeBrowser, begun: dict[str, Any], a: SoftAuthenticator) -> dict[str, Any]:
    return host_call(
        browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": a.create(begun["options"])},
    )


def _credentials(config: Path) -> dict[str, list[str]]:
    return {b.label: [c.credential_id for c in b.credentials] for b in browser_grants(config)}


def _enrol_other(other: FakeBrowser, config: Path, approver: SoftAuthenticator) -> None:
    store.set_pairing_code(
        config / "trust.json",
        hashlib.sha256(b"other-code").hexdigest(),
        int(time.time()) + 600,
    )
    begun = _begin(other, "other-code")
    done = host_call(
        other,
        "pair_complete",
        {
            "challengeId": begun["challengeId"],
            "response": SoftAuthenticator().create(begun["options"]),
            "approval": {
                "challengeId": begun["approval"]["challengeId"],
                "response": approver.get(begun["approval"]["options"]),
            },
        },
    )
    assert done["ok"] is True, done


def test_a_revoked_browser_confirms_in_the_window_and_its_old_credential_is_refused(
    fake_browser: FakeBrowser,
) -> None:
    enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    assert host_call(fake_browser, "policy_get", {})["result"]["enrolled"] is True
    _revoke(config, "test")

    info = host_call(fake_browser, "policy_get", {})["result"]
    assert info["enrolled"] is False and info["windowOnly"] is False
    assert info["credentials"] == [] and info["browsers"] == []
    decision = host_call(fake_browser, "origin_decide", {"origin": "https://mail.example"})
    assert decision["result"] == {"origin": "https://mail.example", "ask": "click"}

    # The lost authenticator (found again by someone else) has nothing to answer: no tap is
    # begun for a browser without a credential. Nothing changes.
    before = (config / "trust.json").read_bytes()
    detail = change_detail({"eval": True})
    refused(
        host_call(fake_browser, "presence_begin", {"action": "policy.widen", "detail": detail}),
        "presence_refused",
    )
    fake_browser.wait_stderr("presence_begin refused")
    assert (config / "trust.json").read_bytes() == before
    assert gate_of(config).current().policy["eval"] is False


def test_a_code_for_another_browser_is_refused_and_spent(
    fake_browser: FakeBrowser, other: FakeBrowser
) -> None:
    key, _ = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    _revoke(config, "test")
    _bound_code(config, key, "bound-to-test", "test")
    grants_before = _credentials(config)

    refused(host_call(other, "pair_begin", {"code": "bound-to-test"}), "presence_refused")
    log = other.wait_stderr("the code was issued for browser 'test', not 'other'")
    assert "bound-to-test" not in log
    assert _credentials(config) == grants_before == {}
    doc = load(config / "trust.json", expect_paired=True)
    assert doc is not None and doc.pairing_code is None  # spent
    [entry] = [e for e in audit_entries(config) if e.get("step") == "code_browser"]
    assert (entry["event"], entry["decision"], entry["browser"]) == (
        "browser_pair",
        "refused",
        "other",
    )
    # The browser it was meant for cannot use it either now: it is single use.
    refused(host_call(fake_browser, "pair_begin", {"code": "bound-to-test"}), "presence_refused")
    assert _credentials(config) == {}


def test_a_bound_code_re_enrols_its_label_without_another_browsers_approval_once(
    fake_browser: FakeBrowser, other: FakeBrowser
) -> None:
    """Two browsers are enrolled; "test" lost its authenticator and was revoked. The code from
    the terminal lets "test" enrol a new one without "other" approving (the phrase typed at the
    terminal did), then the code is gone."""
    key, first = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    _enrol_other(other, config, first)
    [other_credential] = _credentials(config)["other"]
    _revoke(config, "test")

    _bound_code(config, key, "re-enrol-test", "test")
    begun = _begin(fake_browser, "re-enrol-test")
    assert begun["approval"] is None
    assert begun["options"]["excludeCredentials"] == []  # the revoked credential is not "ours"
    new = SoftAuthenticator()
    done = _register(fake_browser, begun, new)
    assert done["ok"] is True, done
    fake_browser.wait_stderr("approved at the terminal")
    assert _credentials(config) == {
        "other": [other_credential],
        "test": [done["result"]["credentialId"]],
    }
    [entry] = [
        e
        for e in audit_entries(config)
        if e["event"] == "browser_pair" and e["decision"] == "granted" and e["browser"] == "test"
    ][-1:]
    assert entry["path"] == "webauthn" and entry["approved_by"] == "terminal"

    # The new credential's taps verify; the code does not work twice.
    detail = change_detail({"eval": True})
    tap = begin_tap(fake_browser, "policy.widen", detail)
    assert [c["id"] for c in tap["options"]["allowCredentials"]] == [done["result"]["credentialId"]]
    widened = complete_tap(
        fake_browser, tap["challengeId"], "policy.widen", detail, new.get(tap["options"])
    )
    assert widened["ok"] is True and widened["result"]["done"] is True, widened
    before = (config / "trust.json").read_bytes()
    refused(host_call(fake_browser, "pair_begin", {"code": "re-enrol-test"}), "presence_refused")
    assert (config / "trust.json").read_bytes() == before


def test_a_bound_code_for_a_label_that_is_enrolled_still_needs_the_approval(
    fake_browser: FakeBrowser,
) -> None:
    """`pair --browser` refuses an enrolled label; should such a code exist anyway (enrolled
    meanwhile, or written by hand), it is only a pairing code: an enrolled credential must still
    approve the new one."""
    key, _ = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    [first_id] = _credentials(config)["test"]
    _bound_code(config, key, "for-enrolled", "test")
    begun = _begin(fake_browser, "for-enrolled")
    assert begun["approval"] is not None
    before = (config / "trust.json").read_bytes()
    refused(_register(fake_browser, begun, SoftAuthenticator()), "presence_refused")
    fake_browser.wait_stderr("an assertion from it is required")
    assert (config / "trust.json").read_bytes() == before
    assert _credentials(config)["test"] == [first_id]


@pytest.mark.parametrize("forgery", ["hand-written", "moved from another code"])
def test_a_binding_the_host_key_did_not_sign_for_this_code_is_refused(
    fake_browser: FakeBrowser, other: FakeBrowser, forgery: str
) -> None:
    """A same-user attacker who can write trust.json wants the no-approval path for a label of
    its own ("other", say a host it runs itself): it writes its own code with a binding — made
    up, or copied from a genuine `pair --browser` code. Refused; nothing is enrolled."""
    key, _ = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    path = config / "trust.json"
    _bound_code(config, key, "genuine-code", "other")  # e.g. one the person issued earlier
    doc = read_json(path)
    binding = doc["pairingCode"]["binding"]
    if forgery == "hand-written":
        binding["sig"] = base64.b64encode(b"\x30" * 70).decode()
    doc["pairingCode"] = {
        "sha256": hashlib.sha256(b"attacker-code").hexdigest(),
        "expiresAt": int(time.time()) + 600,
        "attempts": 0,
        "binding": binding,
    }
    hand_edit(path, doc)
    grants_before = _credentials(config)

    refused(host_call(other, "pair_begin", {"code": "attacker-code"}), "presence_refused")
    other.wait_stderr("the code's browser binding does not verify (tampering)")
    assert _credentials(config) == grants_before
    assert [e["step"] for e in audit_entries(config) if e["decision"] == "refused"] == [
        "code_binding"
    ]
