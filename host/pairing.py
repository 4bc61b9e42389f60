"""Hop 3 browser pairing, host side: the ``host_call`` actions of docs/protocol.md ("Browser
pairing and host-key pinning over hop 3").

* ``pair_begin {code}`` — consume the one-time code ``tabwarden pair`` printed, answer the host's
  public key (for the extension to pin) and WebAuthn creation options.
* ``pair_complete {challengeId, response}`` — verify the created credential and store it for this
  host's browser label as a host-signed grant (path ``webauthn``), audited.
* ``host_proof {nonce}`` — prove possession of the pinned key: raw ``r‖s`` ECDSA P-256 over
  ``"tabwarden/host-proof/v1\\n" + nonce``.

The functions here are synchronous and do blocking I/O (key store, trust record, audit log): the
caller runs them in a worker thread. The ``ChallengeBook`` stays with the caller, on the event
loop. Nothing here puts key material, the code or a nonce into a log line or an error message;
a refused ceremony says only ``presence refused`` outward (the precise reason goes to the log).
"""

from __future__ import annotations

import base64
import binascii
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from tabwarden.errors import TabwardenError
from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.presence import (
    Challenge,
    PresenceRefused,
    begin_registration,
    complete_registration,
)
from tabwarden.trust.record import TrustUnreadable
from tabwarden.trust.verify import Effective

log = logging.getLogger("tabwarden.host")

ACTIONS = ("pair_begin", "pair_complete", "host_proof")
PROOF_DOMAIN = b"tabwarden/host-proof/v1\n"
NONCE_BYTES = 32
USER_NAME = "tabwarden"
#: Generous bounds on what the extension may send (a code is short; an id is 22 chars).
MAX_CODE_CHARS = 256
MAX_ID_CHARS = 256


class NotPaired(TabwardenError):
    """Nothing is paired on this computer (no trust record or no host key)."""

    code = "not_paired"


class BadHostCall(TabwardenError):
    """The host call's arguments are malformed."""

    code = "bad_request"


class UnknownHostAction(TabwardenError):
    """The host does not know that action."""

    code = "unknown_action"


@dataclass(frozen=True, slots=True)
class PairingContext:
    """Where this host's record and key live, and the browser label it serves."""

    trust_path: Path
    browser_label: str
    load_key: Any  # () -> HostKey | None; may raise (keyring unusable, unsafe key file)
    effective: Any  # () -> Effective
    audit: Any  # () -> tabwarden.trust.audit.AuditLog


def _key(ctx: PairingContext) -> HostKey:
    from tabwarden.trust.keystore import KeyStoreUnavailable

    try:
        key = ctx.load_key()
    except KeyStoreUnavailable:
        log.warning("host call: the OS keyring is not usable, so no host key")
        raise NotPaired("the host key is not available") from None
    if key is None:
        raise NotPaired("nothing is paired on this computer (`tabwarden pair`)")
    return key


def _paired_key(ctx: PairingContext) -> tuple[HostKey, Effective]:
    """The host key, with a record that verifies against it (else not_paired / trust_unreadable)."""
    if not ctx.trust_path.exists():
        raise NotPaired("nothing is paired on this computer (`tabwarden pair`)")
    key = _key(ctx)
    eff = ctx.effective()
    if eff.refused:
        log.warning("host call: the trust record is refused (%s)", eff.refused)
        raise TrustUnreadable("the trust record is refused; see `tabwarden status`")
    return key, eff


def _string_arg(args: dict[str, Any], name: str, limit: int) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise BadHostCall(f"{name} must be a non-empty string")
    return value


def _audit_refusal(ctx: PairingContext, step: str) -> None:
    try:
        ctx.audit().append("browser_pair", decision="refused", browser=ctx.browser_label, step=step)
    except Exception as exc:  # a refusal stays a refusal even if the audit log is unwritable
        log.error("could not audit a refused pairing: %s", type(exc).__name__)


def pair_begin(
    ctx: PairingContext, args: dict[str, Any], now: int
) -> tuple[dict[str, Any], Challenge]:
    """Consume the one-time code; the answer for the extension and the challenge to keep."""
    code = _string_arg(args, "code", MAX_CODE_CHARS)
    key, eff = _paired_key(ctx)
    if not store.consume_pairing_code(ctx.trust_path, code, now):
        log.warning("pair_begin refused: wrong, reused or expired pairing code")
        _audit_refusal(ctx, "code")
        raise PresenceRefused("wrong, reused or expired pairing code")
    existing = [c for b in eff.browsers if b.label == ctx.browser_label for c in b.credentials]
    options, challenge = begin_registration(
        ctx.browser_label, user_name=USER_NAME, exclude=existing, now=now
    )
    public = key.public
    log.info("pair_begin: code accepted; challenge issued for browser %r", ctx.browser_label)
    return (
        {
            "hostKey": public.b64,
            "fingerprint": public.fingerprint,
            "browser": ctx.browser_label,
            "challengeId": challenge.id,
            "options": options,
        },
        challenge,
    )


def pair_complete(
    ctx: PairingContext, challenge: Challenge | None, response: Any, now: int
) -> dict[str, Any]:
    """Verify the registration against ``challenge`` (already taken from the book, single use) and
    store the credential as this browser's signed grant."""
    try:
        if challenge is None:
            raise PresenceRefused("unknown, used or expired challenge id")
        if challenge.browser_label != ctx.browser_label:
            raise PresenceRefused("challenge was issued for another browser")
        key, _ = _paired_key(ctx)
        if not isinstance(response, dict):
            raise PresenceRefused("response is not an object")
        credential = complete_registration(challenge, response, now=now)
    except PresenceRefused as exc:
        log.warning("pair_complete refused: %s", exc.reason)
        _audit_refusal(ctx, "registration")
        raise
    store.add_browser_credential(ctx.trust_path, key, ctx.browser_label, credential, now)
    ctx.audit().append(
        "browser_pair", decision="granted", path="webauthn",
        browser=ctx.browser_label, credential=credential.credential_id,
    )
    log.info("browser %r paired (credential enrolled)", ctx.browser_label)
    return {"credentialId": credential.credential_id}


def _decode_nonce(value: Any) -> bytes:
    if not isinstance(value, str) or len(value) > 128:
        raise BadHostCall("nonce must be base64 of 32 bytes")
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise BadHostCall("nonce must be base64 of 32 bytes") from None
    if len(raw) != NONCE_BYTES:
        raise BadHostCall("nonce must be base64 of 32 bytes")
    return raw


def proof_signature(key: HostKey, nonce: bytes) -> bytes:
    """Raw ``r‖s`` (64 bytes) ECDSA P-256 SHA-256 over the domain-separated nonce."""
    r, s = decode_dss_signature(key.sign(PROOF_DOMAIN + nonce))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def host_proof(ctx: PairingContext, args: dict[str, Any]) -> dict[str, Any]:
    nonce = _decode_nonce(args.get("nonce"))
    key = _key(ctx)
    return {"signature": base64.b64encode(proof_signature(key, nonce)).decode("ascii")}
