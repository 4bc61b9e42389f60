"""Hop 3 browser pairing, host side (docs/protocol.md, "Browser pairing and host-key pinning
over hop 3"):

* ``pair_begin {code}`` — consume the one-time code ``tabwarden pair`` printed, answer the host's
  public key (for the extension to pin), WebAuthn creation options and, when any browser is
  already enrolled, ``approval``: assertion options for an existing credential. A code from
  ``tabwarden pair --browser LABEL`` is bound to that label: any other browser presenting it is
  refused (and the code is spent); for its label, while the label holds no credential, the
  phrase typed at the terminal is the approval, so none is asked for.
* ``pair_complete {challengeId, response | windowOnly: true, approval?: {challengeId,
  response}}`` — verify the created credential; the trust operation ``enrol_browser`` stores it
  for this host's browser label as a host-signed grant (path ``webauthn``), or records the
  browser window-only (path ``window``; never one already enrolled). The approval assertion is
  required whenever any browser holds a credential.
* ``host_proof {nonce}`` — prove possession of the pinned key: raw ``r‖s`` ECDSA P-256 over
  ``"tabwarden/host-proof/v1\\n" + nonce``.

Nothing here writes the record except through ``tabwarden.trust.operations`` (and the store's
single-use pairing code).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any

from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from tabwarden.host import calls
from tabwarden.host.calls import BadHostCall, HostCallContext, log
from tabwarden.trust import operations, store
from tabwarden.trust.canonical import canonical
from tabwarden.trust.grants import grant_is_valid
from tabwarden.trust.keys import HostKey
from tabwarden.trust.operations import VerifiedTap
from tabwarden.trust.presence import (
    Challenge,
    PresenceRefused,
    begin_assertion,
    begin_registration,
    complete_assertion,
    complete_registration,
)
from tabwarden.trust.record import PairingCode
from tabwarden.trust.verify import Effective

#: Generous bounds on what the extension may send (a code is short; an id is 22 chars).
MAX_CODE_CHARS = 256


PROOF_DOMAIN = b"tabwarden/host-proof/v1\n"


#: The registration challenge's ``detail`` when a terminal-issued code (``pair --browser``)
#: approved it: ``pair_complete`` then asks no enrolled credential to approve.
TERMINAL_APPROVED = "approved at the terminal"


NONCE_BYTES = 32


USER_NAME = "tabwarden"


def _audit_refusal(ctx: HostCallContext, step: str) -> None:
    try:
        ctx.trust.audit().append(
            "browser_pair", decision="refused", browser=ctx.browser_label, step=step
        )
    except Exception as exc:  # a refusal stays a refusal even if the audit log is unwritable
        log.error("could not audit a refused pairing: %s", type(exc).__name__)


def enrol_detail(browser_label: str, registration_id: str) -> str:
    """What an enrolment approval names: this browser and this very registration ceremony."""
    return canonical({"browser": browser_label, "registration": registration_id}).decode("utf-8")


def pair_begin(
    ctx: HostCallContext, args: dict[str, Any], now: int
) -> tuple[dict[str, Any], list[Challenge]]:
    """Consume the one-time code; the answer for the extension and the challenges to keep.

    When any browser already holds an enrolled credential, enrolling this one also needs an
    assertion from one of those credentials (``approval``: action ``enrol``, bound to this
    browser and this registration challenge) — the code alone cannot add a browser then."""
    code = calls.string_arg(args, "code", MAX_CODE_CHARS)
    key, eff = calls.paired_key(ctx)
    stored = store.consume_pairing_code(ctx.trust.trust_path, code, now)
    if stored is None:
        log.warning("pair_begin refused: wrong, reused or expired pairing code")
        _audit_refusal(ctx, "code")
        raise PresenceRefused("wrong, reused or expired pairing code", "code_refused")
    bound_to = _bound_browser(ctx, key, stored)
    if bound_to is not None and bound_to != ctx.browser_label:
        log.warning(
            "pair_begin refused: the code was issued for browser %r, not %r (it is spent)",
            bound_to,
            ctx.browser_label,
        )
        _audit_refusal(ctx, "code_browser")
        raise PresenceRefused("the pairing code was issued for another browser", "code_refused")
    existing = list(calls.own_credentials(ctx, eff))
    options, challenge = begin_registration(
        ctx.browser_label, user_name=USER_NAME, exclude=existing, now=now, ttl=ctx.challenge_ttl
    )
    terminal_approved = bound_to == ctx.browser_label and not existing
    if terminal_approved:
        challenge = replace(challenge, detail=TERMINAL_APPROVED)
    challenges = [challenge]
    approval = None
    enrolled_anywhere = [c for _, c in calls.all_credentials(eff)]
    if enrolled_anywhere and not terminal_approved:
        approval_options, approval_challenge = begin_assertion(
            "enrol",
            enrol_detail(ctx.browser_label, challenge.id),
            ctx.browser_label,
            enrolled_anywhere,
            now=now,
            ttl=ctx.challenge_ttl,
        )
        challenges.append(approval_challenge)
        approval = {"challengeId": approval_challenge.id, "options": approval_options}
    public = key.public
    log.info(
        "pair_begin: code accepted; challenge issued for browser %r%s",
        ctx.browser_label,
        " (an enrolled credential must approve)"
        if approval
        else " (approved at the terminal: pair --browser)"
        if terminal_approved
        else "",
    )
    return (
        {
            "hostKey": public.b64,
            "fingerprint": public.fingerprint,
            "browser": ctx.browser_label,
            "challengeId": challenge.id,
            "options": options,
            "approval": approval,
        },
        challenges,
    )


def _bound_browser(ctx: HostCallContext, key: HostKey, code: PairingCode) -> str | None:
    """The browser a consumed code is bound to (``None``: any browser). A binding whose
    signature does not verify — written into the file by hand, or moved from another code — is
    tampering: the code is refused (it is spent already)."""
    grant = code.binding_grant()
    if grant is None or code.binding is None:
        return None
    if not grant_is_valid(key.public, grant):
        log.warning("pair_begin refused: the code's browser binding does not verify (tampering)")
        _audit_refusal(ctx, "code_binding")
        raise PresenceRefused("the pairing code's browser binding does not verify", "code_refused")
    return code.binding.browser


def pair_complete(
    ctx: HostCallContext,
    challenge: Challenge | None,
    response: Any,
    now: int,
    *,
    window_only: bool = False,
    approval: Challenge | None = None,
    approval_response: Any = None,
) -> dict[str, Any]:
    """Verify the registration against ``challenge`` (already taken from the book, single use) and
    store the credential as this browser's signed grant — or, with ``window_only``, record this
    browser as paired without an authenticator (never for a browser already enrolled).

    When any browser holds an enrolled credential, ``approval`` / ``approval_response`` must be a
    verified ``enrol`` assertion from one of them naming this browser and this registration; its
    new sign count is stored before the new browser is written. Nothing is written on refusal."""
    try:
        if challenge is None:
            raise PresenceRefused("unknown, used or expired challenge id", "challenge_stale")
        if challenge.browser_label != ctx.browser_label or challenge.kind != "register":
            raise PresenceRefused(
                "challenge was issued for another browser or ceremony", "wrong_request"
            )
        _, eff = calls.paired_key(ctx)
        credential = None
        if window_only:
            if calls.own_credentials(ctx, eff):
                raise PresenceRefused(
                    "an enrolled browser is never downgraded to window-only", "downgrade_refused"
                )
            if now >= challenge.expires_at:
                raise PresenceRefused("challenge expired", "challenge_stale")
        else:
            if not isinstance(response, dict):
                raise PresenceRefused("response is not an object", "malformed")
            credential = complete_registration(challenge, response, now=now)
        approver = _check_approval(ctx, eff, challenge, approval, approval_response, now)
    except PresenceRefused as exc:
        log.warning("pair_complete refused: %s", exc.reason)
        _audit_refusal(ctx, "registration")
        raise
    try:
        operations.enrol_browser(
            ctx.trust, ctx.browser_label, credential, now, approval=approver,
            terminal_approved=approver is None and challenge.detail == TERMINAL_APPROVED,
        )  # fmt: skip
    except store.AlreadyEnrolled:  # enrolled by a concurrent pairing since we checked
        _audit_refusal(ctx, "registration")
        raise PresenceRefused(
            "an enrolled browser is never downgraded to window-only", "downgrade_refused"
        ) from None
    if credential is None:
        log.info("browser %r paired window-only (software confirmation)", ctx.browser_label)
        return {"windowOnly": True}
    log.info("browser %r paired (credential enrolled)", ctx.browser_label)
    return {"credentialId": credential.credential_id}


def _check_approval(
    ctx: HostCallContext,
    eff: Effective,
    registration: Challenge,
    approval: Challenge | None,
    response: Any,
    now: int,
) -> VerifiedTap | None:
    """``None`` when no browser is enrolled yet (the code suffices) or a terminal-issued code for
    this browser approved the registration and it still holds no credential; else the
    approving credential's verified tap, or ``PresenceRefused``."""
    enrolled_anywhere = calls.all_credentials(eff)
    if not enrolled_anywhere:
        return None
    if registration.detail == TERMINAL_APPROVED and not calls.own_credentials(ctx, eff):
        return None
    if approval is None or not isinstance(response, dict):
        raise PresenceRefused(
            "another browser is enrolled: an assertion from it is required", "approval_needed"
        )
    outcome = complete_assertion(
        approval,
        response,
        action="enrol",
        detail=enrol_detail(ctx.browser_label, registration.id),
        browser_label=ctx.browser_label,
        credentials=[c for _, c in enrolled_anywhere],
        now=now,
    )
    for owner, stored in enrolled_anywhere:
        if stored.credential_id == outcome.credential_id:
            return VerifiedTap(
                browser=ctx.browser_label, owner=owner, credential=stored,
                new_sign_count=outcome.new_sign_count, user_verified=outcome.user_verified,
            )  # fmt: skip
    raise PresenceRefused("approving credential vanished")  # pragma: no cover - defensive


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


def host_proof(ctx: HostCallContext, args: dict[str, Any]) -> dict[str, Any]:
    nonce = _decode_nonce(args.get("nonce"))
    key = calls.host_key(ctx)
    return {"signature": base64.b64encode(proof_signature(key, nonce)).decode("ascii")}
