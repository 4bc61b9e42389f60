"""What a tap authorises, against the real host process (docs/protocol.md, "What a tap
authorises"): ``presence_begin`` / ``presence_complete`` bind a WebAuthn assertion from this
browser's enrolled credential to exactly one ``policy.widen`` (with its canonical changes) or
``unkill``; the new sign count is stored before the action; refusals write nothing.
``policy_restrict`` and ``kill`` are free; ``policy_get`` is read-only."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from fido2 import cbor
from fido2.cose import ES256
from fido2.utils import websafe_encode

from tabwarden.trust import store
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.keys import HostKey
from tabwarden.trust.record import Credential
from tests.fakes import FakeBrowser
from tests.test_host_pairing import CODE, _audit, _config, _paired, call, refused
from tests.trust.softauthn import SoftAuthenticator


def _gate(config: Path) -> TrustGate:
    return TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})


def _enrol_via_pairing(
    browser: FakeBrowser, *, uv: bool = True
) -> tuple[HostKey, SoftAuthenticator]:
    """Pair the record, then enrol a credential through the real pair_begin / pair_complete
    (``uv``: whether the authenticator verifies the user)."""
    key = _paired(browser)
    begun = call(browser, "pair_begin", {"code": CODE})["result"]
    authenticator = SoftAuthenticator(uv=uv)
    done = call(
        browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": authenticator.create(begun["options"])},
    )
    assert done["ok"] is True, done
    return key, authenticator


def _enrol_direct(config: Path, key: HostKey, label: str, authenticator: SoftAuthenticator) -> None:
    cose = ES256.from_cryptography_key(authenticator.key.public_key())
    credential = Credential(
        credential_id=websafe_encode(authenticator.credential_id),
        public_key=websafe_encode(cbor.encode(dict(cose))),
        sign_count=authenticator.counter,
        enrolled_at=int(time.time()),
        path="webauthn",
    )
    store.add_browser_credential(config / "trust.json", key, label, credential, int(time.time()))


def _detail(changes: dict[str, Any]) -> str:
    return json.dumps(changes, sort_keys=True, separators=(",", ":"))


def _begin(browser: FakeBrowser, action: str, detail: str) -> dict[str, Any]:
    reply = call(browser, "presence_begin", {"action": action, "detail": detail})
    assert reply["ok"] is True, reply
    return reply["result"]


def _complete(
    browser: FakeBrowser, challenge_id: str, action: str, detail: str, response: Any
) -> dict[str, Any]:
    return call(
        browser,
        "presence_complete",
        {"challengeId": challenge_id, "action": action, "detail": detail, "response": response},
    )


def _sign_count(config: Path) -> int:
    [grant] = [b for b in _gate(config).current().browsers if b.label == "test"]
    [credential] = grant.credentials
    return credential.sign_count


def test_widen_with_a_tap_then_replay_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    assert _gate(config).current().policy["eval"] is False
    detail = _detail({"eval": True})
    begun = _begin(fake_browser, "policy.widen", detail)
    assert begun["options"]["allowCredentials"] and begun["options"]["rpId"]
    response = authenticator.get(begun["options"])
    done = _complete(fake_browser, begun["challengeId"], "policy.widen", detail, response)
    assert done["ok"] is True and done["result"]["done"] is True, done
    assert done["result"]["epoch"] == _gate(config).current().epoch
    assert _gate(config).current().policy["eval"] is True
    assert _sign_count(config) == authenticator.counter == 1  # stored with the action

    [entry] = [e for e in _audit(config) if e["event"] == "policy_set"]
    assert entry["decision"] == "granted" and entry["path"] == "webauthn"
    assert entry["changed"] == ["eval"] and entry["user_verified"] is True

    # Replaying the same assertion (same challenge id, or a fresh one) changes nothing.
    before = (config / "trust.json").read_bytes()
    refused(
        _complete(fake_browser, begun["challengeId"], "policy.widen", detail, response),
        "presence_refused",
    )
    fresh = _begin(fake_browser, "policy.widen", detail)
    refused(
        _complete(fake_browser, fresh["challengeId"], "policy.widen", detail, response),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


def test_assertion_for_unkill_cannot_widen(fake_browser: FakeBrowser) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    begun = _begin(fake_browser, "unkill", "")
    response = authenticator.get(begun["options"])
    before = (config / "trust.json").read_bytes()
    reply = _complete(
        fake_browser, begun["challengeId"], "policy.widen", _detail({"eval": True}), response
    )
    refused(reply, "presence_refused")
    assert reply["error"]["message"] == "presence refused"
    assert (config / "trust.json").read_bytes() == before
    assert _gate(config).current().policy["eval"] is False
    assert [e["decision"] for e in _audit(config) if e["event"] == "policy_set"] == ["refused"]


def test_assertion_for_other_changes_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    begun = _begin(fake_browser, "policy.widen", _detail({"eval": True}))
    response = authenticator.get(begun["options"])
    before = (config / "trust.json").read_bytes()
    refused(
        _complete(
            fake_browser, begun["challengeId"], "policy.widen", _detail({"upload": True}), response
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before
    policy = _gate(config).current().policy
    assert policy["upload"] is False and policy["eval"] is False


def test_non_canonical_detail_is_refused_before_any_ceremony(fake_browser: FakeBrowser) -> None:
    _enrol_via_pairing(fake_browser)
    refused(
        call(
            fake_browser, "presence_begin", {"action": "policy.widen", "detail": '{"eval": true}'}
        ),
        "policy_invalid",
    )
    refused(
        call(
            fake_browser,
            "presence_begin",
            {"action": "policy.widen", "detail": _detail({"nope": 1})},
        ),
        "policy_invalid",
    )
    refused(call(fake_browser, "presence_begin", {"action": "enrol", "detail": ""}), "bad_request")


def test_credential_of_another_browser_is_refused(fake_browser: FakeBrowser) -> None:
    key, _ = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    other = SoftAuthenticator()
    _enrol_direct(config, key, "other", other)
    detail = _detail({"eval": True})
    begun = _begin(fake_browser, "policy.widen", detail)
    before = (config / "trust.json").read_bytes()
    refused(
        _complete(
            fake_browser, begun["challengeId"], "policy.widen", detail, other.get(begun["options"])
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


def test_only_another_browser_enrolled_means_no_challenge(fake_browser: FakeBrowser) -> None:
    key = _paired(fake_browser)
    _enrol_direct(_config(fake_browser), key, "other", SoftAuthenticator())
    refused(
        call(fake_browser, "presence_begin", {"action": "unkill", "detail": ""}), "presence_refused"
    )


def test_non_increasing_sign_counter_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    detail = _detail({"eval": True})
    begun = _begin(fake_browser, "policy.widen", detail)
    assert (
        _complete(
            fake_browser,
            begun["challengeId"],
            "policy.widen",
            detail,
            authenticator.get(begun["options"], counter=5),
        )["ok"]
        is True
    )
    assert _sign_count(config) == 5
    for counter in (5, 4):  # a cloned authenticator, or a replay with a fresh signature
        detail = _detail({"upload": True})
        begun = _begin(fake_browser, "policy.widen", detail)
        before = (config / "trust.json").read_bytes()
        refused(
            _complete(
                fake_browser,
                begun["challengeId"],
                "policy.widen",
                detail,
                authenticator.get(begun["options"], counter=counter),
            ),
            "presence_refused",
        )
        assert (config / "trust.json").read_bytes() == before
    assert _gate(config).current().policy["upload"] is False


def test_user_presence_is_required(fake_browser: FakeBrowser) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    begun = _begin(fake_browser, "unkill", "")
    before = (config / "trust.json").read_bytes()
    refused(
        _complete(
            fake_browser,
            begun["challengeId"],
            "unkill",
            "",
            authenticator.get(begun["options"], up=False),
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before


def test_a_tap_without_uv_is_refused_when_the_credential_verified_at_enrolment(
    fake_browser: FakeBrowser,
) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser, uv=True)
    config = _config(fake_browser)
    store.engage_kill(config / "trust.json", "test", int(time.time()))
    before = (config / "trust.json").read_bytes()
    begun = _begin(fake_browser, "unkill", "")
    assert begun["options"]["userVerification"] == "required"
    refused(
        _complete(
            fake_browser,
            begun["challengeId"],
            "unkill",
            "",
            authenticator.get(begun["options"], uv=False),
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before  # still killed, counter not bumped
    assert _gate(config).current().killed is True
    [entry] = [e for e in _audit(config) if e["event"] == "unkill"]
    assert entry["decision"] == "refused"


def test_unkill_with_a_tap_releases_the_kill(fake_browser: FakeBrowser) -> None:
    # An authenticator without user verification: presence is all it can give, and enough.
    _, authenticator = _enrol_via_pairing(fake_browser, uv=False)
    config = _config(fake_browser)
    store.engage_kill(config / "trust.json", "test", int(time.time()))
    assert _gate(config).current().killed is True
    begun = _begin(fake_browser, "unkill", "")
    assert begun["options"]["userVerification"] == "preferred"
    done = _complete(
        fake_browser,
        begun["challengeId"],
        "unkill",
        "",
        authenticator.get(begun["options"], uv=False),
    )
    assert done["ok"] is True, done
    assert _gate(config).current().killed is False
    [entry] = [e for e in _audit(config) if e["event"] == "unkill"]
    assert (
        entry["decision"] == "granted"
        and entry["path"] == "webauthn"
        and entry["user_verified"] is False
    )


def test_kill_is_free_and_unkill_removes_the_latch(fake_browser: FakeBrowser) -> None:
    _, authenticator = _enrol_via_pairing(fake_browser)
    config = _config(fake_browser)
    done = call(fake_browser, "kill", {})
    assert done["ok"] is True, done
    assert _gate(config).current().killed is True
    [entry] = [e for e in _audit(config) if e["event"] == "kill"]
    assert entry["decision"] == "narrowed" and entry["path"] is None
    latch = _gate(config).kill_latch
    latch.write_text("{}\n")
    begun = _begin(fake_browser, "unkill", "")
    assert _complete(
        fake_browser, begun["challengeId"], "unkill", "", authenticator.get(begun["options"])
    )["ok"]
    assert not latch.exists() and _gate(config).current().killed is False


def test_policy_restrict_is_free_and_refuses_widening(fake_browser: FakeBrowser) -> None:
    _paired(fake_browser)  # no credential needed
    config = _config(fake_browser)
    done = call(fake_browser, "policy_restrict", {"key": "clickGraceSeconds", "value": 0})
    assert done["ok"] is True, done
    assert _gate(config).current().policy["clickGraceSeconds"] == 0
    [entry] = [e for e in _audit(config) if e["event"] == "policy_restrict"]
    assert entry["decision"] == "narrowed" and entry["path"] is None

    before = (config / "trust.json").read_bytes()
    refused(call(fake_browser, "policy_restrict", {"key": "eval", "value": True}), "policy_invalid")
    refused(
        call(fake_browser, "policy_restrict", {"key": "eval", "value": "yes"}), "policy_invalid"
    )
    refused(call(fake_browser, "policy_restrict", {"key": "nope", "value": 1}), "policy_invalid")
    refused(call(fake_browser, "policy_restrict", {"key": "eval"}), "bad_request")
    assert (config / "trust.json").read_bytes() == before
    assert _gate(config).current().policy["eval"] is False


def test_policy_get_shape(fake_browser: FakeBrowser) -> None:
    _paired(fake_browser)
    reply = call(fake_browser, "policy_get", {})
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
    begun = call(fake_browser, "pair_begin", {"code": CODE})["result"]
    authenticator = SoftAuthenticator()
    call(
        fake_browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": authenticator.create(begun["options"])},
    )
    result = call(fake_browser, "policy_get", {})["result"]
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
    refused(call(fake_browser, "presence_begin", {"action": "unkill", "detail": ""}), "not_paired")
    refused(
        call(
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
    refused(call(fake_browser, "policy_restrict", {"key": "eval", "value": False}), "not_paired")
    assert not (_config(fake_browser) / "trust.json").exists()
