"""The host key: ECDSA P-256, the only key that can sign a grant in the trust record.

``HostKey`` is the private half (kept by ``tabwarden.trust.keystore``); ``HostPublicKey`` is what
the trust record and the extension pin. Only P-256 is accepted on load: any other curve or key type
is refused with ``HostKeyInvalid``. Nothing here ever puts key material into a message.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import HOST_KEY_INVALID

__all__ = ["HostKey", "HostKeyInvalid", "HostPublicKey", "b64decode_strict"]

_ECDSA = ec.ECDSA(hashes.SHA256())
#: A P-256 DER SubjectPublicKeyInfo is 91 bytes; allow slack, refuse anything huge.
_MAX_SPKI = 512


class HostKeyInvalid(TabwardenError, ValueError):
    """The host key is not a P-256 (ECDSA) key tabwarden can use."""

    code = HOST_KEY_INVALID
    exit_status = 3


def b64decode_strict(text: str) -> bytes:
    """Standard base64 with padding; refuses other alphabets, whitespace and non-canonical text."""
    if not isinstance(text, str):
        raise ValueError("not a string")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise ValueError("not base64") from None
    if base64.b64encode(raw).decode("ascii") != text:  # one text per value (pad bits zero)
        raise ValueError("not canonical base64")
    return raw


def _require_p256(key: object) -> None:
    if not isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        raise HostKeyInvalid(f"the host key is a {type(key).__name__}, not an EC P-256 key")
    if not isinstance(key.curve, ec.SECP256R1):
        raise HostKeyInvalid(f"the host key uses curve {key.curve.name}, not P-256 (secp256r1)")


class HostPublicKey:
    """The public half: base64 DER SPKI in the record, fingerprint ``SHA256:<unpadded b64>``."""

    __slots__ = ("_der", "_key")

    def __init__(self, key: ec.EllipticCurvePublicKey) -> None:
        _require_p256(key)
        self._key = key
        self._der = key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    @classmethod
    def from_der(cls, der: bytes) -> HostPublicKey:
        if len(der) > _MAX_SPKI:
            raise HostKeyInvalid("the public key is too large to be a P-256 key")
        try:
            key = serialization.load_der_public_key(der)
        except (ValueError, TypeError, UnsupportedAlgorithm):  # cryptography's parse failures
            raise HostKeyInvalid("the public key is not a valid DER SubjectPublicKeyInfo") from None
        _require_p256(key)
        assert isinstance(key, ec.EllipticCurvePublicKey)
        public = cls(key)
        if public._der != der:  # one encoding per key: no trailing bytes, no alternate forms
            raise HostKeyInvalid("the public key is not in canonical DER form")
        return public

    @classmethod
    def from_b64(cls, text: str) -> HostPublicKey:
        try:
            der = b64decode_strict(text)
        except ValueError:
            raise HostKeyInvalid("the public key is not canonical base64") from None
        return cls.from_der(der)

    @property
    def der(self) -> bytes:
        return self._der

    @property
    def b64(self) -> str:
        return base64.b64encode(self._der).decode("ascii")

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256(self._der).digest()
        return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")

    def verify(self, signature: bytes, data: bytes) -> bool:
        """True only for a valid DER ECDSA-P256-SHA256 signature over ``data``. Never raises."""
        try:
            if not isinstance(signature, (bytes, bytearray)) or not isinstance(
                data, (bytes, bytearray)
            ):
                return False
            self._key.verify(bytes(signature), bytes(data), _ECDSA)
        except (InvalidSignature, ValueError, TypeError):
            return False
        except Exception:  # a verifier must never raise; any surprise is "not valid"
            return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HostPublicKey):
            return NotImplemented
        return self._der == other._der

    def __hash__(self) -> int:
        return hash(self._der)

    def __repr__(self) -> str:
        return f"HostPublicKey({self.fingerprint})"


class HostKey:
    """The private half. ``repr`` shows only the fingerprint."""

    __slots__ = ("_key",)

    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        _require_p256(key)
        self._key = key

    @classmethod
    def generate(cls) -> HostKey:
        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_pem(cls, pem: bytes) -> HostKey:
        try:
            key = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm):  # garbage, encrypted, unsupported
            raise HostKeyInvalid("the host key is not an unencrypted PEM private key") from None
        _require_p256(key)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return cls(key)

    def to_pem(self) -> bytes:
        """PKCS8, unencrypted (the key store decides where it lives)."""
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    @property
    def public(self) -> HostPublicKey:
        return HostPublicKey(self._key.public_key())

    def sign(self, data: bytes) -> bytes:
        """DER ECDSA-P256-SHA256 over ``data``."""
        return self._key.sign(data, _ECDSA)

    def __repr__(self) -> str:
        return f"HostKey({self.public.fingerprint})"
