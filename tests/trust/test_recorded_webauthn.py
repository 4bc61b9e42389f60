"""WebAuthn verification (trust/presence.py) against ceremonies recorded from real Chromium.

``fixtures/webauthn-chromium.json`` holds what Debian's Chromium really sent when its CDP virtual
authenticator answered ``navigator.credentials.create()`` / ``get()`` on our extension's page
(re-record with ``.venv/bin/python scripts/record-webauthn-fixtures``). These tests need no
browser: they check the facts the recording captures (origin, rpIdHash, attestation, flags) and
that the host's verifier accepts each recorded ceremony exactly once, for exactly what it was
made for, and refuses every replay or bend of it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key
from fido2 import cbor

from tabwarden.manifests import EXTENSION_ID
from tabwarden.trust.canonical import canonical
from tabwarden.trust.presence import (
    RP_ORIGIN,
    AssertionOutcome,
    Challenge,
    PresenceRefused,
    complete_assertion,
    complete_registration,
)
from tabwarden.trust.record import Credential

FIXTURE = Path(__file__).parent / "fixtures" / "webauthn-chromium.json"
ORIGIN = f"chrome-extension://{EXTENSION_ID}"
# Every recorded tap, in the order it was made within its authenticator.
ASSERTIONS = [("uv", "unkill"), ("uv", "policyWiden"), ("noUv", "unkill")]
CEREMONIES = [("uv", "registration"), ("noUv", "registration"), *ASSERTIONS]
# Flags byte of authenticatorData.
UP, UV, AT = 0x01, 0x04, 0x40


# --- fixture access ---------------------------------------------------------------------------


@functools.cache
def _text() -> str:
    return FIXTURE.read_text("utf-8")


def fixture() -> dict[str, Any]:
    """A fresh copy of the recording (tests may bend it)."""
    data: dict[str, Any] = json.loads(_text())
    return data


def entry(group: str, name: str) -> dict[str, Any]:
    ceremony: dict[str, Any] = fixture()[group][name]
    return ceremony


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def cbor_map(data: bytes) -> Mapping[Any, Any]:
    """A CBOR-encoded map (the attestation object)."""
    decoded = cbor.decode(data)
    assert isinstance(decoded, Mapping), decoded
    return decoded


def challenge(group: str, name: str, **over: Any) -> Challenge:
    """The recorded challenge, rebuilt from its ``to_json()`` (keyword arguments only)."""
    return replace(Challenge.from_json(entry(group, name)["challenge"]), **over)


def client_data(group: str, name: str) -> dict[str, Any]:
    raw = entry(group, name)["response"]["response"]["clientDataJSON"]
    body: dict[str, Any] = json.loads(unb64u(raw))
    return body


def auth_data(group: str, name: str) -> bytes:
    """authenticatorData as Chrome sent it (for a registration: the copy inside the
    attestation object, checked equal to the top-level one in its own test)."""
    response = entry(group, name)["response"]["response"]
    if "attestationObject" in response:
        raw: bytes = cbor_map(unb64u(response["attestationObject"]))["authData"]
        return raw
    return unb64u(response["authenticatorData"])


def counter(group: str, name: str) -> int:
    return int.from_bytes(auth_data(group, name)[33:37], "big")


def register(group: str) -> Credential:
    """The credential the verifier makes of the recorded registration."""
    e = entry(group, "registration")
    return complete_registration(challenge(group, "registration"), e["response"], now=e["now"])


def stored_before(group: str, name: str) -> Credential:
    """The credential as the host stores it just before tap ``name``: registered, then each
    earlier recorded tap of the same authenticator verified and its counter kept."""
    cred = register(group)
    for g, earlier in ASSERTIONS:
        if g != group:
            continue
        if earlier == name:
            return cred
        cred = replace(cred, sign_count=present(g, earlier, credentials=[cred]).new_sign_count)
    raise AssertionError(f"no recorded tap {group}/{name}")


def present(group: str, name: str, **over: Any) -> AssertionOutcome:
    """complete_assertion with the recorded tap, exactly as recorded unless ``over`` bends it
    (``challenge``, ``response``, ``action``, ``detail``, ``browser_label``, ``credentials``,
    ``now``, ``uv_required``)."""
    e = entry(group, name)
    kw: dict[str, Any] = {
        "action": e["challenge"]["action"],
        "detail": e["challenge"]["detail"],
        "browser_label": e["challenge"]["browserLabel"],
        "now": e["now"],
    }
    kw.update(over)
    ch = kw.pop("challenge", None) or challenge(group, name)
    response = kw.pop("response", e["response"])
    if "credentials" not in kw:
        kw["credentials"] = [stored_before(group, name)]
    return complete_assertion(ch, response, **kw)


def refused(reason_part: str, call: Any, *args: Any, **kw: Any) -> None:
    """``call`` raises the opaque PresenceRefused, its local reason naming the failed check."""
    with pytest.raises(PresenceRefused) as info:
        call(*args, **kw)
    assert str(info.value) == "presence refused"
    assert reason_part in info.value.reason, info.value.reason


# --- what real Chrome sends -------------------------------------------------------------------


@pytest.mark.promise("BP-10")
def test_recording_says_what_made_it() -> None:
    made = fixture()["recordedWith"]
    assert made["browser"].startswith("Chromium ")
    assert made["extensionId"] == EXTENSION_ID
    assert made["date"]
    assert made["authenticators"]["uv"]["hasUserVerification"] is True
    assert made["authenticators"]["noUv"]["hasUserVerification"] is False


@pytest.mark.parametrize(("group", "name"), CEREMONIES)
@pytest.mark.promise("BP-10")
def test_client_data_origin_is_the_extension_origin_without_a_slash(group: str, name: str) -> None:
    body = client_data(group, name)
    assert body["origin"] == ORIGIN == RP_ORIGIN
    assert not body["origin"].endswith("/")
    assert body["type"] == ("webauthn.create" if name == "registration" else "webauthn.get")
    assert body["crossOrigin"] is False
    assert body["challenge"] == entry(group, name)["challenge"]["state"]["challenge"]


@pytest.mark.parametrize(("group", "name"), CEREMONIES)
@pytest.mark.promise("BP-10")
def test_page_named_the_bare_id_but_rp_id_hash_is_sha256_of_the_origin(
    group: str, name: str
) -> None:
    options = entry(group, name)["options"]
    assert (options["rp"]["id"] if name == "registration" else options["rpId"]) == EXTENSION_ID
    rp_id_hash = auth_data(group, name)[:32]
    assert rp_id_hash == hashlib.sha256(ORIGIN.encode("ascii")).digest()
    assert rp_id_hash != hashlib.sha256(EXTENSION_ID.encode("ascii")).digest()


@pytest.mark.parametrize("group", ["uv", "noUv"])
@pytest.mark.promise("BP-10")
def test_attestation_is_format_none_with_an_empty_statement(group: str) -> None:
    response = entry(group, "registration")["response"]["response"]
    attestation = cbor_map(unb64u(response["attestationObject"]))
    assert attestation["fmt"] == "none"
    assert attestation["attStmt"] == {}
    assert attestation["authData"] == unb64u(response["authenticatorData"])


@pytest.mark.parametrize(("group", "name"), CEREMONIES)
@pytest.mark.promise("BP-10")
def test_flags_user_present_always_user_verified_only_with_uv(group: str, name: str) -> None:
    flags = auth_data(group, name)[32]
    assert flags & UP
    assert bool(flags & UV) is (group == "uv")
    assert bool(flags & AT) is (name == "registration")


# --- registration -----------------------------------------------------------------------------


@pytest.mark.parametrize("group", ["uv", "noUv"])
@pytest.mark.promise("BP-10")
def test_recorded_registration_verifies_to_the_recorded_key(group: str) -> None:
    response = entry(group, "registration")["response"]
    cred = register(group)
    assert cred.path == "webauthn"
    assert unb64u(cred.credential_id) == unb64u(response["rawId"]) == unb64u(response["id"])
    assert cred.sign_count == counter(group, "registration")
    # The stored COSE key is the one in the attested credential data, parsed by hand here ...
    data = auth_data(group, "registration")
    id_len = int.from_bytes(data[53:55], "big")
    assert data[55 : 55 + id_len] == unb64u(response["rawId"])
    cose, rest = cbor.decode_from(data[55 + id_len :])
    assert rest == b""
    assert cbor.decode(unb64u(cred.public_key)) == cose
    # ... and the same point as the SPKI Chrome's toJSON() reports (ES256, P-256).
    assert response["response"]["publicKeyAlgorithm"] == cose[3] == -7
    spki = load_der_public_key(unb64u(response["response"]["publicKey"]))
    assert isinstance(spki, ec.EllipticCurvePublicKey)
    numbers = spki.public_numbers()
    assert (numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big")) == (cose[-2], cose[-3])


@pytest.mark.promise("BP-10")
def test_the_two_authenticators_made_different_credentials() -> None:
    uv, no_uv = register("uv"), register("noUv")
    assert uv.credential_id != no_uv.credential_id
    assert uv.public_key != no_uv.public_key


@pytest.mark.promise("BP-10")
def test_recorded_registration_refused_when_used_expired_or_already_enrolled() -> None:
    e = entry("uv", "registration")
    refused(
        "already used",
        complete_registration,
        challenge("uv", "registration", used=True),
        e["response"],
        now=e["now"],
    )
    expires = e["challenge"]["expiresAt"]
    refused(
        "expired",
        complete_registration,
        challenge("uv", "registration"),
        e["response"],
        now=expires,
    )
    state = {**e["challenge"]["state"], "exclude": [e["response"]["rawId"]]}
    refused(
        "already enrolled",
        complete_registration,
        challenge("uv", "registration", state=state),
        e["response"],
        now=e["now"],
    )


@pytest.mark.promise("BP-10")
def test_recorded_registration_is_not_an_assertion() -> None:
    e = entry("uv", "registration")
    refused(
        "wrong kind", complete_registration, challenge("uv", "unkill"), e["response"], now=e["now"]
    )


# --- assertions: each recorded tap verifies once, for exactly what it was made for ------------


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_recorded_assertion_verifies_and_the_counter_rises(group: str, name: str) -> None:
    stored = stored_before(group, name)
    outcome = present(group, name, credentials=[stored])
    assert outcome.credential_id == stored.credential_id
    assert outcome.new_sign_count == counter(group, name)
    assert outcome.new_sign_count > stored.sign_count > 0
    assert outcome.user_verified is (group == "uv")


@pytest.mark.promise("BP-10")
def test_policy_widen_detail_is_canonical_json() -> None:
    detail = entry("uv", "policyWiden")["challenge"]["detail"]
    assert detail == '{"eval":true}'
    assert canonical(json.loads(detail)).decode("utf-8") == detail


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_still_verifies_one_second_before_expiry(group: str, name: str) -> None:
    expires = entry(group, name)["challenge"]["expiresAt"]
    assert present(group, name, now=expires - 1).new_sign_count == counter(group, name)


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_for_another_action(group: str, name: str) -> None:
    other = "unkill" if entry(group, name)["challenge"]["action"] != "unkill" else "policy.widen"
    refused("action mismatch", present, group, name, action=other)


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_for_another_detail(group: str, name: str) -> None:
    other = {"": '{"eval":true}', '{"eval":true}': '{"eval":false}'}
    refused(
        "detail mismatch",
        present,
        group,
        name,
        detail=other[entry(group, name)["challenge"]["detail"]],
    )


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_for_another_browser(group: str, name: str) -> None:
    refused("browser mismatch", present, group, name, browser_label="chrome")


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_after_expiry(group: str, name: str) -> None:
    expires = entry(group, name)["challenge"]["expiresAt"]
    refused("expired", present, group, name, now=expires)
    refused("expired", present, group, name, now=expires + 3600)


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_with_the_challenge_used(group: str, name: str) -> None:
    refused("already used", present, group, name, challenge=challenge(group, name, used=True))
    refused("already used", present, group, name, challenge=challenge(group, name).mark_used())


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.parametrize("above", [0, 1, 1000])
@pytest.mark.promise("BP-10")
def test_presented_against_a_counter_already_there(group: str, name: str, above: int) -> None:
    # The host stored this tap's counter (or more): the same tap again is a replay or a clone.
    stored = replace(stored_before(group, name), sign_count=counter(group, name) + above)
    refused("sign counter did not increase", present, group, name, credentials=[stored])


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_against_another_credentials_public_key(group: str, name: str) -> None:
    other = register("noUv" if group == "uv" else "uv")
    stored = replace(stored_before(group, name), public_key=other.public_key)
    refused("signature invalid", present, group, name, credentials=[stored])


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_presented_against_another_credential(group: str, name: str) -> None:
    other = register("noUv" if group == "uv" else "uv")
    refused("not enrolled", present, group, name, credentials=[other])


@pytest.mark.parametrize(("group", "name"), ASSERTIONS)
@pytest.mark.promise("BP-10")
def test_signature_bit_flipped(group: str, name: str) -> None:
    response = entry(group, name)["response"]
    sig = bytearray(unb64u(response["response"]["signature"]))
    sig[-1] ^= 0x01
    response["response"]["signature"] = base64.urlsafe_b64encode(sig).rstrip(b"=").decode()
    refused("signature invalid", present, group, name, response=response)


@pytest.mark.promise("BP-10")
def test_one_recorded_tap_does_not_answer_another_challenge() -> None:
    # The unkill answer against the policy.widen challenge (same credential, same browser).
    refused(
        "challenge mismatch",
        present,
        "uv",
        "policyWiden",
        response=entry("uv", "unkill")["response"],
    )


# --- user verification ------------------------------------------------------------------------


@pytest.mark.promise("BP-10")
def test_uv_tap_satisfies_uv_required() -> None:
    outcome = present("uv", "unkill", uv_required=True)
    assert outcome.user_verified is True


@pytest.mark.promise("BP-10")
def test_no_uv_tap_verifies_when_uv_is_not_required() -> None:
    outcome = present("noUv", "unkill", uv_required=False)
    assert outcome.user_verified is False
    assert outcome.new_sign_count == counter("noUv", "unkill")


@pytest.mark.promise("BP-10")
def test_no_uv_tap_refused_when_uv_is_required() -> None:
    refused("user verification (UV) required", present, "noUv", "unkill", uv_required=True)
