"""Hop 3 browser pairing against the real host process (docs/protocol.md, "Browser pairing and
host-key pinning over hop 3"): ``pair_begin`` consumes the one-time code and hands out the host
key and WebAuthn creation options; ``pair_complete`` verifies a real (software) registration and
stores a host-signed browser grant, audited; ``host_proof`` signs a nonce with the pinned key."""

from __future__ import annotations

import base64
import hashlib
import os
import time
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from tabwarden.trust import store
from tabwarden.trust.presence import begin_assertion, complete_assertion
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


@pytest.mark.promise("BP-05")
def test_pairing_happy_path_stores_a_verified_webauthn_grant(fake_browser: FakeBrowser) -> None:
    key = paired_host(fake_browser)
    config = config_of(fake_browser)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})
    assert begun["ok"] is True, begun
    result = begun["result"]
    assert result["hostKey"] == key.public.b64 and result["fingerprint"] == key.public.fingerprint
    assert result["browser"] == "test" and isinstance(result["challengeId"], str)
    assert result["options"]["rp"]["id"] and result["options"]["attestation"] == "none"

    authenticator = SoftAuthenticator()
    response = authenticator.create(result["options"])
    done = host_call(
        fake_browser, "pair_complete", {"challengeId": result["challengeId"], "response": response}
    )
    assert done["ok"] is True, done
    credential_id = done["result"]["credentialId"]
    assert credential_id == response["id"]

    [grant] = browser_grants(config)  # only a grant whose host signature verifies shows up here
    assert grant.label == "test"
    [credential] = grant.credentials
    assert credential.credential_id == credential_id and credential.path == "webauthn"

    # The stored public key is the authenticator's: a later tap verifies against it.
    now = time.time()
    options, challenge = begin_assertion("unkill", "", "test", grant.credentials, now=now)
    outcome = complete_assertion(
        challenge,
        authenticator.get(options),
        action="unkill",
        detail="",
        browser_label="test",
        credentials=grant.credentials,
        now=now,
    )
    assert outcome.credential_id == credential_id

    [entry] = [e for e in audit_entries(config) if e["event"] == "browser_pair"]
    assert entry["decision"] == "granted" and entry["path"] == "webauthn"
    assert entry["browser"] == "test" and entry["credential"] == credential_id

    # The challenge was single use: completing it again is refused, and nothing changes.
    before = (config / "trust.json").read_bytes()
    again = host_call(
        fake_browser, "pair_complete", {"challengeId": result["challengeId"], "response": response}
    )
    refused(again, "presence_refused")
    assert (config / "trust.json").read_bytes() == before
    # Neither the code nor the key material ever reaches the host's log.
    assert PAIRING_CODE not in fake_browser.stderr and key.public.b64 not in fake_browser.stderr


@pytest.mark.promise("BP-01")
def test_wrong_code_is_refused_and_pairs_nothing(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    reply = host_call(fake_browser, "pair_begin", {"code": "tw-0000-wrong-guess"})
    refused(reply, "presence_refused")
    assert reply["error"]["message"] == "presence refused"  # opaque: says not which check failed
    assert browser_grants(config) == ()
    assert [e["decision"] for e in audit_entries(config) if e["event"] == "browser_pair"] == [
        "refused"
    ]


@pytest.mark.promise("BP-01")
def test_the_right_code_works_once(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    assert host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["ok"] is True
    refused(host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE}), "presence_refused")


@pytest.mark.promise("BP-01")
def test_expired_code_is_refused(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    store.set_pairing_code(
        config_of(fake_browser) / "trust.json",
        hashlib.sha256(PAIRING_CODE.encode()).hexdigest(),
        int(time.time()) - 1,
    )
    refused(host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE}), "presence_refused")


@pytest.mark.promise("BP-02")
def test_unknown_challenge_id_is_refused(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    response = SoftAuthenticator().create(begun["options"])
    before = (config / "trust.json").read_bytes()
    refused(
        host_call(
            fake_browser,
            "pair_complete",
            {"challengeId": "bm90LWEtY2hhbGxlbmdl", "response": response},
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == before and browser_grants(config) == ()


@pytest.mark.parametrize("tamper", ["challenge", "origin", "attestation", "ids", "not_an_object"])
@pytest.mark.promise("BP-02")
def test_tampered_registration_is_refused_and_changes_nothing(
    fake_browser: FakeBrowser, tamper: str
) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    begun = host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    authenticator = SoftAuthenticator()
    response: Any
    if tamper == "challenge":
        response = authenticator.create(begun["options"], challenge=os.urandom(32))
    elif tamper == "origin":
        response = authenticator.create(begun["options"], origin="https://evil.example")
    elif tamper == "attestation":
        response = authenticator.create(
            begun["options"], fmt="packed", att_stmt={"alg": -7, "sig": b"x"}
        )
    elif tamper == "ids":
        response = authenticator.create(begun["options"])
        response["id"] = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    else:
        response = "not an object"
    before = (config / "trust.json").read_bytes()
    reply = host_call(
        fake_browser, "pair_complete", {"challengeId": begun["challengeId"], "response": response}
    )
    refused(reply, "presence_refused")
    assert reply["error"]["message"] == "presence refused"
    assert (config / "trust.json").read_bytes() == before
    assert browser_grants(config) == ()
    assert not [
        e
        for e in audit_entries(config)
        if e["event"] == "browser_pair" and e["decision"] == "granted"
    ]
    # The refused challenge is gone: the genuine response cannot be replayed against it.
    genuine = authenticator.create(begun["options"])
    refused(
        host_call(
            fake_browser,
            "pair_complete",
            {"challengeId": begun["challengeId"], "response": genuine},
        ),
        "presence_refused",
    )


@pytest.mark.promise("BP-08")
def test_host_proof_signs_the_domain_separated_nonce(fake_browser: FakeBrowser) -> None:
    key = paired_host(fake_browser)
    nonce = os.urandom(32)
    reply = host_call(fake_browser, "host_proof", {"nonce": base64.b64encode(nonce).decode()})
    assert reply["ok"] is True, reply
    raw = base64.b64decode(reply["result"]["signature"], validate=True)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = serialization.load_der_public_key(base64.b64decode(key.public.b64))  # as pinned
    assert isinstance(public, ec.EllipticCurvePublicKey)
    public.verify(der, b"tabwarden/host-proof/v1\n" + nonce, ec.ECDSA(hashes.SHA256()))
    assert key.public.verify(der, b"tabwarden/host-proof/v1\n" + nonce)
    assert not key.public.verify(der, nonce)  # bound to the domain prefix, not the bare nonce


@pytest.mark.parametrize(
    "nonce",
    [
        base64.b64encode(b"\0" * 31).decode(),
        base64.b64encode(b"\0" * 33).decode(),
        "",
        "not base64!",
        32,
        None,
    ],
)
def test_host_proof_refuses_a_bad_nonce(fake_browser: FakeBrowser, nonce: Any) -> None:
    paired_host(fake_browser)
    refused(host_call(fake_browser, "host_proof", {"nonce": nonce}), "bad_request")


def test_without_pairing_every_action_is_not_paired(fake_browser: FakeBrowser) -> None:
    fake_browser.wait_socket()
    fake_browser.hello()
    refused(
        host_call(fake_browser, "host_proof", {"nonce": base64.b64encode(os.urandom(32)).decode()}),
        "not_paired",
    )
    refused(host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE}), "not_paired")
    assert not (config_of(fake_browser) / "trust.json").exists()


def test_unknown_and_malformed_host_calls(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    refused(host_call(fake_browser, "unpair_everything", {}), "unknown_action")
    refused(host_call(fake_browser, "pair_begin", {}), "bad_request")  # no code: nothing consumed
    for bad in (
        {"type": "host_call", "id": 7, "action": "host_proof", "args": {}},
        {"type": "host_call", "id": "x", "action": "Host Proof", "args": {}},
        {"type": "host_call", "id": "y", "action": "host_proof", "args": []},
    ):
        fake_browser.send(bad)
    fake_browser.wait_stderr("malformed host_call")
    # Dropped, not answered: the next reply is for the next well-formed host_call, and the code
    # still works.
    assert host_call(fake_browser, "pair_begin", {"code": PAIRING_CODE})["ok"] is True
    assert fake_browser.proc.poll() is None
