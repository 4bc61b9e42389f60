"""A test-only software WebAuthn authenticator plus the browser's client half.

Builds real responses in the WebAuthn JSON serialisation (what ``PublicKeyCredential.toJSON()``
gives the options page): a P-256 key from pyca/cryptography, ``attestationObject`` as CBOR with
``fmt: "none"``, ``authenticatorData`` with rpIdHash / flags / signCount / attested credential
data, ``clientDataJSON`` as Chrome writes it, and ES256 assertion signatures over
``authData || SHA-256(clientDataJSON)``. Every field can be bent to exercise one refusal.
Never import this from production code.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2.cose import ES256
from fido2.utils import websafe_decode, websafe_encode
from fido2.webauthn import AttestationObject, AttestedCredentialData, AuthenticatorData

from tabwarden.trust.presence import RP_ORIGIN

UP = 0x01
UV = 0x04
AT = 0x40
_UNSET: Any = object()


def b64u(data: bytes) -> str:
    return websafe_encode(data)


def unb64u(text: str) -> bytes:
    return websafe_decode(text)


def _public(options: dict[str, Any]) -> dict[str, Any]:
    public: dict[str, Any] = options.get("publicKey", options)
    return public


class SoftAuthenticator:
    """One credential on one authenticator (ctap2-like, counter per credential)."""

    def __init__(self, *, origin: str = RP_ORIGIN, uv: bool = True) -> None:
        self.origin = origin
        self.uv = uv
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.counter = 0

    @property
    def rp_id_hash(self) -> bytes:
        return hashlib.sha256(self.origin.encode()).digest()

    def cose_key(self) -> ES256:
        """The credential's public key as a COSE key (fido2 leaves this constructor unannotated)."""
        key: ES256 = ES256.from_cryptography_key(self.key.public_key())  # type: ignore[no-untyped-call]
        return key

    def _client_data(
        self,
        kind: str,
        challenge: bytes,
        origin: str | None,
        cross_origin: bool,
        extra: dict[str, Any],
    ) -> bytes:
        body: dict[str, Any] = {
            "type": kind,
            "challenge": b64u(challenge),
            "origin": self.origin if origin is None else origin,
            "crossOrigin": cross_origin,
        }
        body.update(extra)
        return json.dumps(body, separators=(",", ":")).encode()

    def _flags(self, up: bool, uv: bool | None, at: bool) -> AuthenticatorData.FLAG:
        value = (
            (UP if up else 0) | (UV if (self.uv if uv is None else uv) else 0) | (AT if at else 0)
        )
        return AuthenticatorData.FLAG(value)

    def create(
        self,
        options: dict[str, Any],
        *,
        up: bool = True,
        uv: bool | None = None,
        origin: str | None = None,
        rp_id_hash: bytes | None = None,
        kind: str = "webauthn.create",
        challenge: bytes | None = None,
        cross_origin: bool = False,
        fmt: str = "none",
        att_stmt: dict[str, Any] | None = None,
        credential_id: bytes | None = None,
        client_extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``navigator.credentials.create(...)`` then ``.toJSON()``."""
        pub = _public(options)
        chal = unb64u(pub["challenge"]) if challenge is None else challenge
        cdj = self._client_data(kind, chal, origin, cross_origin, client_extra or {})
        cose = self.cose_key()
        cred = AttestedCredentialData.create(b"\0" * 16, self.credential_id, cose)
        auth = AuthenticatorData.create(
            self.rp_id_hash if rp_id_hash is None else rp_id_hash,
            self._flags(up, uv, True),
            self.counter,
            cred,
        )
        att = AttestationObject.create(fmt, auth, {} if att_stmt is None else att_stmt)
        raw_id = self.credential_id if credential_id is None else credential_id
        return {
            "id": b64u(raw_id),
            "rawId": b64u(raw_id),
            "type": "public-key",
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
            "response": {
                "clientDataJSON": b64u(cdj),
                "attestationObject": b64u(bytes(att)),
                "transports": ["internal"],
            },
        }

    def get(
        self,
        options: dict[str, Any],
        *,
        up: bool = True,
        uv: bool | None = None,
        counter: int | None = None,
        origin: str | None = None,
        rp_id_hash: bytes | None = None,
        kind: str = "webauthn.get",
        challenge: bytes | None = None,
        cross_origin: bool = False,
        credential_id: bytes | None = None,
    ) -> dict[str, Any]:
        """``navigator.credentials.get(...)`` then ``.toJSON()`` (bumps the counter by one)."""
        pub = _public(options)
        chal = unb64u(pub["challenge"]) if challenge is None else challenge
        self.counter = self.counter + 1 if counter is None else counter
        cdj = self._client_data(kind, chal, origin, cross_origin, {})
        auth = bytes(
            AuthenticatorData.create(
                self.rp_id_hash if rp_id_hash is None else rp_id_hash,
                self._flags(up, uv, False),
                self.counter,
            )
        )
        sig = self.key.sign(auth + hashlib.sha256(cdj).digest(), ec.ECDSA(hashes.SHA256()))
        raw_id = self.credential_id if credential_id is None else credential_id
        return {
            "id": b64u(raw_id),
            "rawId": b64u(raw_id),
            "type": "public-key",
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
            "response": {
                "clientDataJSON": b64u(cdj),
                "authenticatorData": b64u(auth),
                "signature": b64u(sig),
                "userHandle": None,
            },
        }
