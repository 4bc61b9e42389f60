"""The host key is P-256 only; canonical JSON has exactly one byte string per value."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from hypothesis import given
from hypothesis import strategies as st

from tabwarden.trust.canonical import NotCanonical, canonical
from tabwarden.trust.keys import HostKey, HostKeyInvalid, HostPublicKey

HOST = HostKey.generate()


def _pem(private: object) -> bytes:
    return private.private_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _spki_b64(private: object) -> str:
    der = private.public_key().public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode()


def test_round_trip_sign_verify_and_fingerprint() -> None:
    key = HostKey.generate()
    again = HostKey.from_pem(key.to_pem())
    assert b"BEGIN PRIVATE KEY" in key.to_pem()  # PKCS8, unencrypted
    assert again.public == key.public
    public = HostPublicKey.from_b64(key.public.b64)
    sig = again.sign(b"data")
    assert public.verify(sig, b"data")
    assert not public.verify(sig, b"datA")
    assert not HostKey.generate().public.verify(sig, b"data")
    digest = hashlib.sha256(base64.b64decode(public.b64)).digest()
    assert public.fingerprint == "SHA256:" + base64.b64encode(digest).decode().rstrip("=")
    assert "=" not in public.fingerprint
    assert "PRIVATE" not in repr(key) and key.public.fingerprint in repr(key)


@pytest.mark.parametrize(
    "private",
    [
        ec.generate_private_key(ec.SECP384R1()),
        ec.generate_private_key(ec.SECP256K1()),
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
        ed25519.Ed25519PrivateKey.generate(),
    ],
    ids=["p384", "secp256k1", "rsa", "ed25519"],
)
def test_other_curves_and_key_types_are_refused(private: object) -> None:
    with pytest.raises(HostKeyInvalid):
        HostKey.from_pem(_pem(private))
    with pytest.raises(HostKeyInvalid):
        HostPublicKey.from_b64(_spki_b64(private))


@pytest.mark.parametrize("text", ["", "not base64!", "QQ==", " " + HostKey.generate().public.b64])
def test_garbage_public_keys_are_refused(text: str) -> None:
    with pytest.raises(HostKeyInvalid):
        HostPublicKey.from_b64(text)


def test_garbage_pem_is_refused_without_echoing_it() -> None:
    with pytest.raises(HostKeyInvalid) as info:
        HostKey.from_pem(b"-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n")
    assert "c2VjcmV0" not in str(info.value)


@given(st.binary(max_size=120), st.binary(max_size=64))
def test_verify_never_raises(signature: bytes, data: bytes) -> None:
    assert HOST.public.verify(signature, data) is False


def test_verify_rejects_non_bytes() -> None:
    assert HOST.public.verify("sig", b"x") is False  # type: ignore[arg-type]


# --- canonical -------------------------------------------------------------------------------


def test_canonical_form() -> None:
    assert canonical({"b": 1, "a": [True, None, "é"]}) == '{"a":[true,null,"é"],"b":1}'.encode()
    assert canonical({"b": 1, "a": 2}) == canonical({"a": 2, "b": 1})


@pytest.mark.parametrize(
    "value",
    [
        1.0,
        {"x": 0.5},
        float("nan"),
        {1: "a"},
        {"a": {2: 3}},
        "\ud800",
        {"k": b"bytes"},
        {"k": {1, 2}},
    ],
)
def test_canonical_refuses_what_has_no_single_form(value: object) -> None:
    with pytest.raises(NotCanonical):
        canonical(value)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_json)
def test_canonical_is_stable_under_reparse(value: object) -> None:
    once = canonical(value)
    assert canonical(json.loads(once)) == once
