"""What a tap authorises, against the real host process (docs/protocol.md, "What a tap
authorises"): ``presence_begin`` / ``presence_complete`` bind a WebAuthn assertion from this
browser's enrolled credential to exactly one ``policy.widen`` (with its canonical changes) or
``unkill``; the new sign count is stored before the action; refusals write nothing.
``policy_restrict`` and ``kill`` are free; ``policy_get`` is read-only."""

from __future__ import annotations

import time

import pytest

from tabwarden.trust import store
from tests.fakes import FakeBrowser
from tests.fixtures import (
    PAIRING_CODE,
    audit_entries,
    begin_tap,
    change_detail,
    complete_tap,
    config_of,
    enrol_direct,
    enrol_via_pairing,
    gate_of,
    host_call,
    paired_host,
    refused,
    sign_count,
)
from tests.trust.softauthn import SoftAuthenticator


@pytest.mark.promise("BP-09")
def test_widen_with_a_tap_then_replay_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    assert gate_of(config).current().policy["eval"] is False
    detail = change_detail({"eval": True})
    begun = begin_tap(fake_browser, "policy.widen", detail)
    assert begun["options"]["allowCredentials"] and begun["options"]["rpId"]
    response = authenticator.get(begun["options"])
    done = complete_tap(fake_browser, begun["challengeId"], "policy.widen", detail, response)
    assert done["ok"] is True and done["result"]["done"] is True, done
    assert done["result"]["epoch"] == gate_of(config).current().epoch
    assert gate_of(config).current().policy["eval"] is True
    assert sign_count(config) == authenticator.counter == 1  # stored with the action

    [entry] = [e for e in audit_entries(config) if e["event"] == "policy_set"]
    assert entry["decision"] == "granted" and entry["path"] == "webauthn"
    assert entry["changed"] == ["eval"] and entry["user_verified"] is True

    # Replaying the same assertion (same challenge id, or a fresh one) changes nothing.
    before = (config / "trust.json").read_bytes()
    refused(
        complete_tap(fake_browser, begun["challengeId"], "policy.widen", detail, response),
        "presence_refused",
    )
    fresh = begin_tap(fake_browser, "policy.widen", detail)
    refused(
        complete_tap(fake_browser, fresh["challengeId"], "policy.widen", detail, response),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.promise("BP-09")
def test_assertion_for_unkill_cannot_widen(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    begun = begin_tap(fake_browser, "unkill", "")
    response = authenticator.get(begun["options"])
    before = (config / "trust.json").read_bytes()
    reply = complete_tap(
        fake_browser, begun["challengeId"], "policy.widen", change_detail({"eval": True}), response
    )
    refused(reply, "presence_refused")
    assert reply["error"]["message"] == "presence refused"
    assert (config / "trust.json").read_bytes() == before
    assert gate_of(config).current().policy["eval"] is False
    assert [e["decision"] for e in audit_entries(config) if e["event"] == "policy_set"] == [
        "refused"
    ]


@pytest.mark.promise("BP-09")
def test_assertion_for_other_changes_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    begun = begin_tap(fake_browser, "policy.widen", change_detail({"eval": True}))
    response = authenticator.get(begun["options"])
    before = (config / "trust.json").read_bytes()
    refused(
        complete_tap(
            fake_browser,
            begun["challengeId"],
            "policy.widen",
            change_detail({"upload": True}),
            response,
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before
    policy = gate_of(config).current().policy
    assert policy["upload"] is False and policy["eval"] is False


def test_non_canonical_detail_is_refused_before_any_ceremony(fake_browser: FakeBrowser) -> None:
    enrol_via_pairing(fake_browser)
    refused(
        host_call(
            fake_browser, "presence_begin", {"action": "policy.widen", "detail": '{"eval": true}'}
        ),
        "policy_invalid",
    )
    refused(
        host_call(
            fake_browser,
            "presence_begin",
            {"action": "policy.widen", "detail": change_detail({"nope": 1})},
        ),
        "policy_invalid",
    )
    refused(
        host_call(fake_browser, "presence_begin", {"action": "enrol", "detail": ""}), "bad_request"
    )


@pytest.mark.promise("BP-09")
def test_credential_of_another_browser_is_refused(fake_browser: FakeBrowser) -> None:
    key, _ = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    other = SoftAuthenticator()
    enrol_direct(config, key, "other", other)
    detail = change_detail({"eval": True})
    begun = begin_tap(fake_browser, "policy.widen", detail)
    before = (config / "trust.json").read_bytes()
    refused(
        complete_tap(
            fake_browser, begun["challengeId"], "policy.widen", detail, other.get(begun["options"])
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


def test_only_another_browser_enrolled_means_no_challenge(fake_browser: FakeBrowser) -> None:
    key = paired_host(fake_browser)
    enrol_direct(config_of(fake_browser), key, "other", SoftAuthenticator())
    refused(
        host_call(fake_browser, "presence_begin", {"action": "unkill", "detail": ""}),
        "presence_refused",
    )


@pytest.mark.promise("BP-09")
def test_non_increasing_sign_counter_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    detail = change_detail({"eval": True})
    begun = begin_tap(fake_browser, "policy.widen", detail)
    assert (
        complete_tap(
            fake_browser,
            begun["challengeId"],
            "policy.widen",
            detail,
            authenticator.get(begun["options"], counter=5),
        )["ok"]
        is True
    )
    assert sign_count(config) == 5
    for counter in (5, 4):  # a cloned authenticator, or a replay with a fresh signature
        detail = change_detail({"upload": True})
        begun = begin_tap(fake_browser, "policy.widen", detail)
        before = (config / "trust.json").read_bytes()
        refused(
            complete_tap(
                fake_browser,
                begun["challengeId"],
                "policy.widen",
                detail,
                authenticator.get(begun["options"], counter=counter),
            ),
            "presence_refused",
        )
        assert (config / "trust.json").read_bytes() == before
    assert gate_of(config).current().policy["upload"] is False


@pytest.mark.promise("BP-09")
def test_user_presence_is_required(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    begun = begin_tap(fake_browser, "unkill", "")
    before = (config / "trust.json").read_bytes()
    refused(
        complete_tap(
            fake_browser,
            begun["challengeId"],
            "unkill",
            "",
            authenticator.get(begun["options"], up=False),
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.promise("BP-12")
def test_a_tap_without_uv_is_refused_when_the_credential_verified_at_enrolment(
    fake_browser: FakeBrowser,
) -> None:
    _, authenticator = enrol_via_pairing(fake_browser, uv=True)
    config = config_of(fake_browser)
    store.engage_kill(config / "trust.json", "test", int(time.time()))
    before = (config / "trust.json").read_bytes()
    begun = begin_tap(fake_browser, "unkill", "")
    assert begun["options"]["userVerification"] == "required"
    refused(
        complete_tap(
            fake_browser,
            begun["challengeId"],
            "unkill",
            "",
            authenticator.get(begun["options"], uv=False),
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before  # still killed, counter not bumped
    assert gate_of(config).current().killed is True
    [entry] = [e for e in audit_entries(config) if e["event"] == "unkill"]
    assert entry["decision"] == "refused"


def test_unkill_with_a_tap_releases_the_kill(fake_browser: FakeBrowser) -> None:
    # An authenticator without user verification: presence is all it can give, and enough.
    _, authenticator = enrol_via_pairing(fake_browser, uv=False)
    config = config_of(fake_browser)
    store.engage_kill(config / "trust.json", "test", int(time.time()))
    assert gate_of(config).current().killed is True
    begun = begin_tap(fake_browser, "unkill", "")
    assert begun["options"]["userVerification"] == "preferred"
    done = complete_tap(
        fake_browser,
        begun["challengeId"],
        "unkill",
        "",
        authenticator.get(begun["options"], uv=False),
    )
    assert done["ok"] is True, done
    assert gate_of(config).current().killed is False
    [entry] = [e for e in audit_entries(config) if e["event"] == "unkill"]
    assert (
        entry["decision"] == "granted"
        and entry["path"] == "webauthn"
        and entry["user_verified"] is False
    )


@pytest.mark.promise("BP-15")
def test_kill_is_free_and_unkill_removes_the_latch(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    done = host_call(fake_browser, "kill", {})
    assert done["ok"] is True, done
    assert gate_of(config).current().killed is True
    [entry] = [e for e in audit_entries(config) if e["event"] == "kill"]
    assert entry["decision"] == "narrowed" and entry["path"] is None
    latch = gate_of(config).kill_latch
    latch.write_text("{}\n")
    begun = begin_tap(fake_browser, "unkill", "")
    assert complete_tap(
        fake_browser, begun["challengeId"], "unkill", "", authenticator.get(begun["options"])
    )["ok"]
    assert not latch.exists() and gate_of(config).current().killed is False


@pytest.mark.promise("BP-15")
def test_policy_restrict_is_free_and_refuses_widening(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)  # no credential needed
    config = config_of(fake_browser)
    done = host_call(fake_browser, "policy_restrict", {"key": "clickGraceSeconds", "value": 0})
    assert done["ok"] is True, done
    assert gate_of(config).current().policy["clickGraceSeconds"] == 0
    [entry] = [e for e in audit_entries(config) if e["event"] == "policy_restrict"]
    assert entry["decision"] == "narrowed" and entry["path"] is None

    before = (config / "trust.json").read_bytes()
    refused(
        host_call(fake_browser, "policy_restrict", {"key": "eval", "value": True}), "policy_invalid"
    )
    refused(
        host_call(fake_browser, "policy_restrict", {"key": "eval", "value": "yes"}),
        "policy_invalid",
    )
    refused(
        host_call(fake_browser, "policy_restrict", {"key": "nope", "value": 1}), "policy_invalid"
    )
    refused(host_call(fake_browser, "policy_restrict", {"key": "eval"}), "bad_request")
    assert (config / "trust.json").read_bytes() == before
    assert gate_of(config).current().policy["eval"] is False


def test_policy_get_shape(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    reply = host_call(fake_browser, "policy_get", {})
    assert reply["ok"] is True, reply
    result = reply["result"]
    assert set(result) == {
        "policy",
        "killed",
        "epoch",
        "browsers",
        "enrolled",
        "windowOnly",
        "credentials",
    }
    assert result["policy"]["eval"] is False and result["killed"] is False
    assert result["browsers"] == [] and result["enrolled"] is False
    assert result["windowOnly"] is False and result["credentials"] == []
    assert isinstance(result["epoch"], int)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    authenticator = SoftAuthenticator()
    host_call(
        fake_browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": authenticator.create(begun["options"])},
    )
    result = host_call(fake_browser, "policy_get", {})["result"]
    assert result["browsers"] == ["test"] and result["enrolled"] is True
    [cred] = result["credentials"]
    assert cred["uv"] is True and set(cred) == {
        "credentialId",
        "enrolledAt",
        "uv",
    }  # no key material


def test_not_paired(fake_browser: FakeBrowser) -> None:
    fake_browser.wait_socket()
    fake_browser.hello()
    refused(
        host_call(fake_browser, "presence_begin", {"action": "unkill", "detail": ""}), "not_paired"
    )
    refused(
        host_call(
            fake_browser,
            "presence_complete",
            {
                "challengeId": "bm90LWEtY2hhbGxlbmdl",
                "action": "unkill",
                "detail": "",
                "response": {},
            },
        ),
        "not_paired",
    )
    refused(
        host_call(fake_browser, "policy_restrict", {"key": "eval", "value": False}), "not_paired"
    )
    assert not (config_of(fake_browser) / "trust.json").exists()
