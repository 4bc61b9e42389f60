"""Enrolling a second browser, and browsers without an authenticator, against the real host
process: once any browser holds a credential, the one-time code alone no longer adds a browser —
an assertion from an enrolled credential must approve this very registration; a browser with no
authenticator pairs "window-only" (software confirmation), and an enrolled browser is never
downgraded to it. Every refusal leaves trust.json byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.trust import store
from tests.fakes import FakeBrowser
from tests.fixtures import (
    PAIRING_CODE,
    audit_entries,
    browser_grants,
    config_of,
    host_call,
    paired_host,
    refused,
)
from tests.trust.softauthn import SoftAuthenticator


@pytest.fixture
def second(runtime_dir: Path) -> Iterator[FakeBrowser]:
    """Another browser (label "other") sharing the first one's trust record."""
    browser = FakeBrowser(runtime_dir, label="other")
    try:
        yield browser
    finally:
        browser.close()


def _new_code(config: Path, code: str) -> None:
    store.set_pairing_code(
        config / "trust.json", hashlib.sha256(code.encode()).hexdigest(), int(time.time()) + 600
    )


def _connect(browser: FakeBrowser) -> None:
    browser.wait_socket()
    browser.hello()


def _enrol_first(browser: FakeBrowser) -> SoftAuthenticator:
    paired_host(browser)
    begun = host_call(browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    assert begun["approval"] is None  # nobody is enrolled yet: the code suffices
    a = SoftAuthenticator()
    done = host_call(
        browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": a.create(begun["options"])},
    )
    assert done["ok"] is True, done
    return a


def _begin_second(second: FakeBrowser, config: Path, code: str = "second-code") -> dict[str, Any]:
    _new_code(config, code)
    reply = host_call(second, "pair_begin", {"code": code})
    assert reply["ok"] is True, reply
    result: dict[str, Any] = reply["result"]
    return result


def _labels(config: Path) -> dict[str, int]:
    return {b.label: len(b.credentials) for b in browser_grants(config)}


@pytest.mark.promise("BP-03")
def test_a_second_browser_needs_an_assertion_from_an_enrolled_credential(
    fake_browser: FakeBrowser, second: FakeBrowser
) -> None:
    a = _enrol_first(fake_browser)
    config = config_of(fake_browser)
    _connect(second)
    [first] = browser_grants(config)
    first_cred = first.credentials[0]

    begun = _begin_second(second, config)
    approval = begun["approval"]
    assert approval is not None
    assert [c["id"] for c in approval["options"]["allowCredentials"]] == [first_cred.credential_id]
    b = SoftAuthenticator()
    registration = b.create(begun["options"])
    before = (config / "trust.json").read_bytes()

    # The attacker holds only the code: a registration without the approval is refused.
    refused(
        host_call(
            second, "pair_complete", {"challengeId": begun["challengeId"], "response": registration}
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before
    assert _labels(config) == {"test": 1}

    # ... and the refusal burnt the ceremony: the registration challenge is gone.
    begun = _begin_second(second, config, "second-code-2")
    registration = b.create(begun["options"])
    before = (config / "trust.json").read_bytes()
    # An "approval" from an authenticator nobody enrolled is refused.
    stranger = SoftAuthenticator()
    refused(
        host_call(
            second,
            "pair_complete",
            {
                "challengeId": begun["challengeId"],
                "response": registration,
                "approval": {
                    "challengeId": begun["approval"]["challengeId"],
                    "response": stranger.get(begun["approval"]["options"]),
                },
            },
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before

    # A real approval made for one registration cannot approve another one.
    begun_1 = _begin_second(second, config, "second-code-3")
    approval_1 = a.get(begun_1["approval"]["options"])
    begun_2 = _begin_second(second, config, "second-code-4")  # a fresh ceremony, its own challenges
    before = (config / "trust.json").read_bytes()
    refused(
        host_call(
            second,
            "pair_complete",
            {
                "challengeId": begun_2["challengeId"],
                "response": b.create(begun_2["options"]),
                "approval": {
                    "challengeId": begun_1["approval"]["challengeId"],
                    "response": approval_1,
                },
            },
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before

    # The enrolled credential approves this very registration: the second browser is enrolled,
    # and the approving credential's counter is stored.
    begun = _begin_second(second, config, "second-code-5")
    done = host_call(
        second,
        "pair_complete",
        {
            "challengeId": begun["challengeId"],
            "response": b.create(begun["options"]),
            "approval": {
                "challengeId": begun["approval"]["challengeId"],
                "response": a.get(begun["approval"]["options"]),
            },
        },
    )
    assert done["ok"] is True, done
    assert _labels(config) == {"test": 1, "other": 1}
    [first] = [br for br in browser_grants(config) if br.label == "test"]
    assert first.credentials[0].sign_count == a.counter > first_cred.sign_count
    [entry] = [
        e
        for e in audit_entries(config)
        if e["event"] == "browser_pair"
        and e.get("browser") == "other"
        and e["decision"] == "granted"
    ]
    assert entry["path"] == "webauthn" and entry["approved_by"] == first_cred.credential_id


@pytest.mark.promise("BP-03")
def test_replaying_an_approval_is_refused(fake_browser: FakeBrowser, second: FakeBrowser) -> None:
    a = _enrol_first(fake_browser)
    config = config_of(fake_browser)
    _connect(second)
    begun = _begin_second(second, config)
    b = SoftAuthenticator()
    approval = {
        "challengeId": begun["approval"]["challengeId"],
        "response": a.get(begun["approval"]["options"]),
    }
    registration = b.create(begun["options"])
    assert (
        host_call(
            second,
            "pair_complete",
            {"challengeId": begun["challengeId"], "response": registration, "approval": approval},
        )["ok"]
        is True
    )
    again = _begin_second(second, config, "again")
    before = (config / "trust.json").read_bytes()
    refused(
        host_call(
            second,
            "pair_complete",
            {
                "challengeId": again["challengeId"],
                "response": b.create(again["options"]),
                "approval": approval,
            },
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.promise("BP-04")
def test_window_only_pairing_is_recorded_as_software_confirmation(
    fake_browser: FakeBrowser,
) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    done = host_call(
        fake_browser, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True}
    )
    assert done["ok"] is True and done["result"] == {"windowOnly": True}, done
    [browser] = browser_grants(config)
    assert browser.label == "test" and browser.window_only and browser.credentials == ()
    info = host_call(fake_browser, "policy_get", {})["result"]
    assert info["windowOnly"] is True and info["enrolled"] is False
    [entry] = [
        e
        for e in audit_entries(config)
        if e["event"] == "browser_pair" and e["decision"] == "granted"
    ]
    assert entry["path"] == "window"
    # A window-only browser has nothing to tap with: widening stays out of reach.
    refused(
        host_call(fake_browser, "presence_begin", {"action": "unkill", "detail": ""}),
        "presence_refused",
    )


@pytest.mark.promise("BP-04")
def test_an_enrolled_browser_is_never_downgraded_to_window_only(fake_browser: FakeBrowser) -> None:
    _enrol_first(fake_browser)
    config = config_of(fake_browser)
    _new_code(config, "downgrade")
    begun = host_call(fake_browser, "pair_begin", {"code": "downgrade"})["result"]
    before = (config / "trust.json").read_bytes()
    refused(
        host_call(
            fake_browser, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True}
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before
    [browser] = browser_grants(config)
    assert not browser.window_only and len(browser.credentials) == 1


def test_a_window_only_browser_can_later_enrol_a_credential(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    assert host_call(
        fake_browser, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True}
    )["ok"]
    _new_code(config, "upgrade")
    begun = host_call(fake_browser, "pair_begin", {"code": "upgrade"})["result"]
    assert begun["approval"] is None  # a window-only browser holds no credential to approve with
    done = host_call(
        fake_browser,
        "pair_complete",
        {
            "challengeId": begun["challengeId"],
            "response": SoftAuthenticator().create(begun["options"]),
        },
    )
    assert done["ok"] is True, done
    [browser] = browser_grants(config)
    assert not browser.window_only and len(browser.credentials) == 1


@pytest.mark.promise("BP-03")
def test_a_second_browser_going_window_only_still_needs_the_approval(
    fake_browser: FakeBrowser, second: FakeBrowser
) -> None:
    a = _enrol_first(fake_browser)
    config = config_of(fake_browser)
    _connect(second)
    begun = _begin_second(second, config)
    before = (config / "trust.json").read_bytes()
    refused(
        host_call(
            second, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True}
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before
    begun = _begin_second(second, config, "second-window")
    done = host_call(
        second,
        "pair_complete",
        {
            "challengeId": begun["challengeId"],
            "windowOnly": True,
            "approval": {
                "challengeId": begun["approval"]["challengeId"],
                "response": a.get(begun["approval"]["options"]),
            },
        },
    )
    assert done["ok"] is True, done
    assert {b.label: b.window_only for b in browser_grants(config)} == {
        "test": False,
        "other": True,
    }


@pytest.mark.parametrize(
    "bad", [{"windowOnly": "yes"}, {"approval": "nope"}, {"approval": {"challengeId": 7}}]
)
def test_malformed_pair_complete_is_a_bad_request(
    fake_browser: FakeBrowser, bad: dict[str, Any]
) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    before = (config / "trust.json").read_bytes()
    refused(
        host_call(fake_browser, "pair_complete", {"challengeId": begun["challengeId"], **bad}),
        "bad_request",
    )
    assert (config / "trust.json").read_bytes() == before


def test_revoke_browser_is_the_escape_when_the_authenticator_is_lost(
    fake_browser: FakeBrowser,
) -> None:
    """The enrolled credential is gone (a lost key): the code alone cannot re-enrol while the
    record still holds it; `revoke browser LABEL` (free, at a terminal) forgets it, and then the
    code and a new authenticator pair again."""
    _enrol_first(fake_browser)
    config = config_of(fake_browser)
    _new_code(config, "lost")
    begun = host_call(fake_browser, "pair_begin", {"code": "lost"})["result"]
    assert begun["approval"] is not None  # the lost credential would have to approve
    store.revoke(config / "trust.json", "browser", "test", int(time.time()))
    _new_code(config, "fresh")
    begun = host_call(fake_browser, "pair_begin", {"code": "fresh"})["result"]
    assert begun["approval"] is None
    done = host_call(
        fake_browser,
        "pair_complete",
        {
            "challengeId": begun["challengeId"],
            "response": SoftAuthenticator().create(begun["options"]),
        },
    )
    assert done["ok"] is True, done
    assert _labels(config) == {"test": 1}
