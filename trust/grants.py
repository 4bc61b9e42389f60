"""Signing and checking grants: the records that add capability.

A grant's ``sig`` is the host key's DER ECDSA-P256-SHA256 signature, base64, over
``GRANT_DOMAIN + canonical(grant without "sig")``. The domain prefix keeps a grant signature from
ever being confused with any other signature the host key makes (e.g. its proof of possession to
the extension). ``epoch`` (the record's epoch the grant was written at) and ``killSerial`` (the
kill serial when it was signed) are part of the signed bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from tabwarden.trust.canonical import NotCanonical, canonical
from tabwarden.trust.keys import HostKey, HostPublicKey, b64decode_strict

__all__ = ["GRANT_DOMAIN", "grant_is_valid", "sign_grant", "signed_bytes"]

GRANT_DOMAIN = b"tabwarden/trust-grant/v1\n"
_RESERVED = ("epoch", "killSerial", "sig")


def signed_bytes(grant: Mapping[str, Any]) -> bytes:
    """What the signature covers: the domain prefix and the canonical grant without ``sig``."""
    body = {k: v for k, v in grant.items() if k != "sig"}
    return GRANT_DOMAIN + canonical(body)


def sign_grant(
    key: HostKey, grant: Mapping[str, Any], *, epoch: int, kill_serial: int
) -> dict[str, Any]:
    """``grant`` plus ``epoch``, ``killSerial`` and ``sig``. ``grant`` must name its ``kind``."""
    if not isinstance(grant.get("kind"), str):
        raise ValueError("a grant must carry its kind")
    for name, value in (("epoch", epoch), ("kill_serial", kill_serial)):
        if type(value) is not int or value < 0:
            raise ValueError(f"{name} must be a non-negative integer")
    body = {k: v for k, v in grant.items() if k not in _RESERVED}
    body["epoch"] = epoch
    body["killSerial"] = kill_serial
    signature = key.sign(signed_bytes(body))
    return {**body, "sig": base64.b64encode(signature).decode("ascii")}


def grant_is_valid(public: HostPublicKey, grant: Mapping[str, Any]) -> bool:
    """True only when ``grant`` carries a valid signature by ``public``. Never raises."""
    try:
        if not isinstance(grant, Mapping):
            return False
        sig = grant.get("sig")
        if not isinstance(sig, str) or len(sig) > 256:
            return False
        for name in ("epoch", "killSerial"):
            if type(grant.get(name)) is not int:
                return False
        if not isinstance(grant.get("kind"), str):
            return False
        signature = b64decode_strict(sig)
        data = signed_bytes(grant)
    except (ValueError, NotCanonical, TypeError, RecursionError):
        return False
    return public.verify(signature, data)
