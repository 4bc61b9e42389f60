"""Hop 3 browser pairing, host side: the ``host_call`` actions of docs/protocol.md ("Browser
pairing and host-key pinning over hop 3").

* ``pair_begin {code}`` — consume the one-time code ``tabwarden pair`` printed, answer the host's
  public key (for the extension to pin), WebAuthn creation options and, when any browser is
  already enrolled, ``approval``: assertion options for an existing credential.
* ``pair_complete {challengeId, response | windowOnly: true, approval?: {challengeId,
  response}}`` — verify the created credential and store it for this host's browser label as a
  host-signed grant (path ``webauthn``), or record the browser window-only (path ``window``; a
  browser with no authenticator, never one already enrolled); audited. The approval assertion
  is required whenever any browser holds a credential.
* ``host_proof {nonce}`` — prove possession of the pinned key: raw ``r‖s`` ECDSA P-256 over
  ``"tabwarden/host-proof/v1\\n" + nonce``.

And what a tap authorises (docs/protocol.md, "What a tap authorises"):

* ``policy_get {}`` — read-only view of the effective policy for the options page.
* ``presence_begin {action, detail}`` / ``presence_complete {challengeId, action, detail,
  response}`` — a WebAuthn assertion from this host's own browser credential, bound to exactly
  one ``policy.widen`` (detail = canonical JSON of the changes) or ``unkill`` (detail ``""``);
  also ``confirm.eval`` / ``confirm.upload`` (canonical ``{code, origin}`` / ``{origin, path}``;
  only when the signed policy already enables eval / upload with ``presenceConfirm``, else
  ``policy_denied``: the host verifies, stores the counter and answers ``{done}``, nothing more)
  and ``pair_client`` (canonical ``{exe, label, sha256}``; a client grant, path ``webauthn``).
  The new sign count is stored (re-signed grant) before the action runs. User presence is
  required; user verification is required when the credential verified the user at enrolment
  (``Credential.uv``), else preferred; it is reported in the audit entry (``user_verified``).
* ``policy_restrict {key, value}`` and ``kill {}`` — narrowing: free, no tap and no key.
* ``clients_recent {}`` — read-only: paired MCP clients and recently seen spawners.
* ``client_revoke {label}`` — narrowing: forget a paired MCP client (free, no tap, no key).
* ``audit_tail {limit?}`` — read-only: the newest audit entries (newest last) for the options page.

The functions here are synchronous and do blocking I/O (key store, trust record, audit log): the
caller runs them in a worker thread. The ``ChallengeBook`` stays with the caller, on the event
loop. Nothing here puts key material, the code or a nonce into a log line or an error message;
a refused ceremony says only ``presence refused`` outward (the precise reason goes to the log).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from tabwarden.errors import TabwardenError
from tabwarden.paths import LABEL_RE
from tabwarden.trust import operations, store
from tabwarden.trust.canonical import canonical
from tabwarden.trust.keys import HostKey
from tabwarden.trust.operations import NotPaired, TrustContext, VerifiedTap
from tabwarden.trust.policy import PolicyError, apply_set, normalise_origin, validate_value
from tabwarden.trust.presence import (
    CHALLENGE_TTL,
    Challenge,
    PresenceRefused,
    begin_assertion,
    begin_registration,
    complete_assertion,
    complete_registration,
)
from tabwarden.trust.record import Credential, TrustUnreadable
from tabwarden.trust.verify import Effective

log = logging.getLogger("tabwarden.host")

#: What a tap may authorise over hop 3 (a subset of ``trust.presence.ACTIONS``).
PRESENCE_ACTIONS = ("policy.widen", "unkill", "confirm.eval", "confirm.upload", "pair_client")
#: The canonical JSON of a whole policy change (1000 origins of 300 chars fit comfortably).
MAX_DETAIL_CHARS = 512 * 1024
#: ``confirm.eval`` names the full code: at most 100000 characters, each at most a 6-char escape.
MAX_EVAL_CODE_CHARS = 100_000
MAX_EVAL_DETAIL_CHARS = 6 * MAX_EVAL_CODE_CHARS + 4096
MAX_UPLOAD_PATH_CHARS = 4096
MAX_EXE_CHARS = 4096
MAX_ORIGIN_CHARS = 2048
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
#: The policy key each confirm action needs enabled (with ``presenceConfirm: true``).
_CONFIRM_KEYS = {"confirm.eval": "eval", "confirm.upload": "upload"}
KILL_REASON = "engaged from the browser"
PROOF_DOMAIN = b"tabwarden/host-proof/v1\n"
NONCE_BYTES = 32
USER_NAME = "tabwarden"
#: Generous bounds on what the extension may send (a code is short; an id is 22 chars).
MAX_CODE_CHARS = 256
MAX_ID_CHARS = 256
#: ``audit_tail``: how many entries by default, at most, and a bound on the reply's JSON size (a
#: native message to the browser must stay under 1 MiB; the oldest entries are dropped first).
AUDIT_TAIL_DEFAULT = 200
AUDIT_TAIL_MAX = 1000
AUDIT_TAIL_MAX_BYTES = 512 * 1024


class BadHostCall(TabwardenError):
    """The host call's arguments are malformed."""

    code = "bad_request"


class PolicyDenied(TabwardenError):
    """The signed policy keeps that off; a tap cannot turn it on."""

    code = "policy_denied"


class UnknownHostAction(TabwardenError):
    """The host does not know that action."""

    code = "unknown_action"


@dataclass(frozen=True, slots=True, kw_only=True)
class PairingContext:
    """The trust record this host serves, and the browser label it serves it for."""

    trust: TrustContext
    browser_label: str
    config_dir: Path | None = None  # where spawners.json lives (clients_recent), if any
    challenge_ttl: float = CHALLENGE_TTL  # seconds a ceremony stays answerable (never longer)


def _key(ctx: PairingContext) -> HostKey:
    try:
        return operations.require_key(ctx.trust)
    except NotPaired:
        log.warning("host call: no host key is available")
        raise


def _paired_key(ctx: PairingContext) -> tuple[HostKey, Effective]:
    """The host key, with a record that verifies against it (else not_paired / trust_unreadable)."""
    try:
        return operations.require_paired(ctx.trust)
    except TrustUnreadable:
        log.warning("host call: the trust record is refused (%s)", ctx.trust.effective().refused)
        raise


def _view(ctx: PairingContext, what: str) -> Effective:
    """The effective record for a read-only view (``trust_unreadable`` when it is refused)."""
    eff = ctx.trust.effective()
    if eff.refused:
        log.warning("%s: the trust record is refused (%s)", what, eff.refused)
        raise TrustUnreadable("the trust record is refused; see `tabwarden status`")
    return eff


def _string_arg(args: dict[str, Any], name: str, limit: int) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise BadHostCall(f"{name} must be a non-empty string")
    return value


def _audit_refusal(ctx: PairingContext, step: str) -> None:
    try:
        ctx.trust.audit().append(
            "browser_pair", decision="refused", browser=ctx.browser_label, step=step
        )
    except Exception as exc:  # a refusal stays a refusal even if the audit log is unwritable
        log.error("could not audit a refused pairing: %s", type(exc).__name__)


def _all_credentials(eff: Effective) -> list[tuple[str, Credential]]:
    """Every enrolled credential in the record, with the label of the browser holding it."""
    return [(b.label, c) for b in eff.browsers for c in b.credentials]


def enrol_detail(browser_label: str, registration_id: str) -> str:
    """What an enrolment approval names: this browser and this very registration ceremony."""
    return canonical({"browser": browser_label, "registration": registration_id}).decode("utf-8")


def pair_begin(
    ctx: PairingContext, args: dict[str, Any], now: int
) -> tuple[dict[str, Any], list[Challenge]]:
    """Consume the one-time code; the answer for the extension and the challenges to keep.

    When any browser already holds an enrolled credential, enrolling this one also needs an
    assertion from one of those credentials (``approval``: action ``enrol``, bound to this
    browser and this registration challenge) — the code alone cannot add a browser then."""
    code = _string_arg(args, "code", MAX_CODE_CHARS)
    key, eff = _paired_key(ctx)
    if not store.consume_pairing_code(ctx.trust.trust_path, code, now):
        log.warning("pair_begin refused: wrong, reused or expired pairing code")
        _audit_refusal(ctx, "code")
        raise PresenceRefused("wrong, reused or expired pairing code")
    existing = list(_own_credentials(ctx, eff))
    options, challenge = begin_registration(
        ctx.browser_label, user_name=USER_NAME, exclude=existing, now=now, ttl=ctx.challenge_ttl
    )
    challenges = [challenge]
    approval = None
    enrolled_anywhere = [c for _, c in _all_credentials(eff)]
    if enrolled_anywhere:
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
        " (an enrolled credential must approve)" if approval else "",
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


def pair_complete(
    ctx: PairingContext,
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
            raise PresenceRefused("unknown, used or expired challenge id")
        if challenge.browser_label != ctx.browser_label or challenge.kind != "register":
            raise PresenceRefused("challenge was issued for another browser or ceremony")
        _, eff = _paired_key(ctx)
        credential = None
        if window_only:
            if _own_credentials(ctx, eff):
                raise PresenceRefused("an enrolled browser is never downgraded to window-only")
            if now >= challenge.expires_at:
                raise PresenceRefused("challenge expired")
        else:
            if not isinstance(response, dict):
                raise PresenceRefused("response is not an object")
            credential = complete_registration(challenge, response, now=now)
        approver = _check_approval(ctx, eff, challenge, approval, approval_response, now)
    except PresenceRefused as exc:
        log.warning("pair_complete refused: %s", exc.reason)
        _audit_refusal(ctx, "registration")
        raise
    try:
        operations.enrol_browser(ctx.trust, ctx.browser_label, credential, now, approval=approver)
    except store.AlreadyEnrolled:  # enrolled by a concurrent pairing since we checked
        _audit_refusal(ctx, "registration")
        raise PresenceRefused("an enrolled browser is never downgraded to window-only") from None
    if credential is None:
        log.info("browser %r paired window-only (software confirmation)", ctx.browser_label)
        return {"windowOnly": True}
    log.info("browser %r paired (credential enrolled)", ctx.browser_label)
    return {"credentialId": credential.credential_id}


def _check_approval(
    ctx: PairingContext,
    eff: Effective,
    registration: Challenge,
    approval: Challenge | None,
    response: Any,
    now: int,
) -> VerifiedTap | None:
    """``None`` when no browser is enrolled yet (the code suffices); else the approving
    credential's verified tap, or ``PresenceRefused``."""
    enrolled_anywhere = _all_credentials(eff)
    if not enrolled_anywhere:
        return None
    if approval is None or not isinstance(response, dict):
        raise PresenceRefused("another browser is enrolled: an assertion from it is required")
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


def host_proof(ctx: PairingContext, args: dict[str, Any]) -> dict[str, Any]:
    nonce = _decode_nonce(args.get("nonce"))
    key = _key(ctx)
    return {"signature": base64.b64encode(proof_signature(key, nonce)).decode("ascii")}


# --- what a tap authorises ------------------------------------------------------------------


def _own_credentials(ctx: PairingContext, eff: Effective) -> tuple[Credential, ...]:
    return tuple(c for b in eff.browsers if b.label == ctx.browser_label for c in b.credentials)


def policy_get(ctx: PairingContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: the effective policy, the kill state and which browsers are paired."""
    eff = _view(ctx, "policy_get")
    return {
        "policy": eff.policy.to_json(),
        "killed": eff.killed,
        "epoch": eff.epoch,
        "browsers": [b.label for b in eff.browsers],
        "enrolled": operations.enrolled(eff, ctx.browser_label),
        "windowOnly": any(b.label == ctx.browser_label and b.window_only for b in eff.browsers),
        "credentials": [
            {"credentialId": c.credential_id, "enrolledAt": c.enrolled_at, "uv": c.uv}
            for c in _own_credentials(ctx, eff)
        ],
    }


def _presence_action(args: dict[str, Any]) -> str:
    action = args.get("action")
    if action not in PRESENCE_ACTIONS:
        raise BadHostCall(f"action must be one of {', '.join(PRESENCE_ACTIONS)}")
    return str(action)


def _changes(action: str, detail: Any) -> dict[str, Any]:
    """The policy changes ``detail`` names (``{}`` for ``unkill``); refuses any detail that is
    not exactly the canonical JSON of a valid, non-empty change set."""
    if not isinstance(detail, str) or len(detail) > MAX_DETAIL_CHARS:
        raise BadHostCall("detail must be a string")
    if action == "unkill":
        if detail != "":
            raise BadHostCall('detail must be "" for unkill')
        return {}
    try:
        changes = json.loads(detail)
    except ValueError:
        raise PolicyError("detail must be the canonical JSON of the policy changes") from None
    if not isinstance(changes, dict) or not changes:
        raise PolicyError("detail must name at least one policy change")
    try:
        recomputed = canonical(changes).decode("utf-8")
    except ValueError:
        raise PolicyError("detail must be the canonical JSON of the policy changes") from None
    if recomputed != detail:
        raise PolicyError("detail must be the canonical JSON (sorted keys, compact) of the changes")
    for key, value in changes.items():
        validate_value(key, value)  # PolicyError (policy_invalid) before any ceremony
    return changes


def _canonical_object(detail: Any, keys: frozenset[str], limit: int) -> dict[str, Any]:
    """``detail`` parsed, if it is exactly the canonical JSON of an object with ``keys``."""
    if not isinstance(detail, str) or not detail or len(detail) > limit:
        raise BadHostCall("detail must be a string")
    try:
        value = json.loads(detail)
    except ValueError:
        raise BadHostCall("detail must be canonical JSON") from None
    if not isinstance(value, dict) or set(value) != keys:
        raise BadHostCall(f"detail must name exactly {', '.join(sorted(keys))}")
    try:
        recomputed = canonical(value).decode("utf-8")
    except ValueError:
        raise BadHostCall("detail must be canonical JSON") from None
    if recomputed != detail:
        raise BadHostCall("detail must be the canonical JSON (sorted keys, compact)")
    return value


def _exact_origin(value: Any) -> str:
    try:
        exact = normalise_origin(value)
    except PolicyError:
        raise BadHostCall("origin must be an exact origin") from None
    if exact != value:
        raise BadHostCall("origin must be an exact origin (normalised)")
    return exact


def _confirm_detail(action: str, detail: Any) -> dict[str, Any]:
    """``confirm.eval`` → ``{code, origin}``; ``confirm.upload`` → ``{origin, path}``."""
    if action == "confirm.eval":
        value = _canonical_object(detail, frozenset({"code", "origin"}), MAX_EVAL_DETAIL_CHARS)
        code = value["code"]
        if not isinstance(code, str) or not code or len(code) > MAX_EVAL_CODE_CHARS:
            raise BadHostCall(
                f"code must be a non-empty string of at most {MAX_EVAL_CODE_CHARS} chars"
            )
    else:
        value = _canonical_object(detail, frozenset({"origin", "path"}), MAX_DETAIL_CHARS)
        path = value["path"]
        if (
            not isinstance(path, str)
            or not path
            or len(path) > MAX_UPLOAD_PATH_CHARS
            or "\x00" in path
        ):
            raise BadHostCall("path must be a non-empty file path")
    _exact_origin(value["origin"])
    return value


def _client_detail(detail: Any) -> dict[str, Any]:
    """``pair_client`` → ``{exe, label, sha256}``, checked by the trust store's rules."""
    value = _canonical_object(detail, frozenset({"exe", "label", "sha256"}), MAX_DETAIL_CHARS)
    label, exe, sha256 = value["label"], value["exe"], value["sha256"]
    if not isinstance(label, str) or not LABEL_RE.match(label):
        raise BadHostCall("label must be a client label (a-z, 0-9, _ and -; at most 32)")
    if (
        not isinstance(exe, str)
        or not exe.startswith("/")
        or len(exe) > MAX_EXE_CHARS
        or "\x00" in exe
    ):
        raise BadHostCall("exe must be an absolute path")
    if not isinstance(sha256, str) or not _HEX64.match(sha256):
        raise BadHostCall("sha256 must be 64 lower-case hex digits")
    return value


def _parsed_detail(action: str, detail: Any) -> dict[str, Any]:
    """What ``detail`` names for ``action``; refuses anything but its exact canonical form."""
    if action in _CONFIRM_KEYS:
        return _confirm_detail(action, detail)
    if action == "pair_client":
        return _client_detail(detail)
    return _changes(action, detail)


def _require_confirm_policy(eff: Effective, action: str) -> None:
    """A tap replaces the confirm window's click; it never turns on what the policy keeps off."""
    key = _CONFIRM_KEYS[action]
    if eff.killed or not getattr(eff.policy, key) or not eff.policy.presence_confirm:
        log.warning("%s refused: the policy does not allow %s with presenceConfirm", action, key)
        raise PolicyDenied(f"the policy does not allow {key} confirmed by a tap")


def presence_begin(
    ctx: PairingContext, args: dict[str, Any], now: int
) -> tuple[dict[str, Any], Challenge]:
    """Mint an assertion challenge for exactly (action, detail, this browser)."""
    action = _presence_action(args)
    detail = args.get("detail")
    _parsed_detail(action, detail)
    _, eff = _paired_key(ctx)
    if action in _CONFIRM_KEYS:
        _require_confirm_policy(eff, action)
    credentials = _own_credentials(ctx, eff)
    if not credentials:
        log.warning("presence_begin refused: browser %r has no credential", ctx.browser_label)
        raise PresenceRefused("no enrolled credential for this browser")
    options, challenge = begin_assertion(
        action, str(detail), ctx.browser_label, credentials, now=now, ttl=ctx.challenge_ttl
    )
    log.info("presence_begin: %s challenge issued for browser %r", action, ctx.browser_label)
    return {"challengeId": challenge.id, "options": options}, challenge


_AUDIT_EVENT = {
    "policy.widen": "policy_set",
    "unkill": "unkill",
    "confirm.eval": "confirm_eval",
    "confirm.upload": "confirm_upload",
    "pair_client": "pair_client",
}


def presence_complete(
    ctx: PairingContext, challenge: Challenge | None, args: dict[str, Any], now: int
) -> dict[str, Any]:
    """Verify the tap against ``challenge`` (already taken from the book, single use), store the
    new sign count, then perform the action. Nothing is written when the tap is refused."""
    action = _presence_action(args)
    detail = args.get("detail")
    parsed = _parsed_detail(action, detail)
    event = _AUDIT_EVENT[action]
    key, eff = _paired_key(ctx)
    if action == "policy.widen":
        apply_set(eff.policy, parsed)  # policy_invalid before any ceremony
    elif action in _CONFIRM_KEYS:
        _require_confirm_policy(eff, action)  # policy_denied before any ceremony
    credentials = _own_credentials(ctx, eff)
    try:
        if challenge is None:
            raise PresenceRefused("unknown, used or expired challenge id")
        response = args.get("response")
        if not isinstance(response, dict):
            raise PresenceRefused("response is not an object")
        outcome = complete_assertion(
            challenge,
            response,
            action=action,
            detail=str(detail),
            browser_label=ctx.browser_label,
            credentials=credentials,
            now=now,
        )
    except PresenceRefused as exc:
        log.warning("presence_complete (%s) refused: %s", action, exc.reason)
        try:
            ctx.trust.audit().append(
                event, decision="refused", path="webauthn", browser=ctx.browser_label
            )
        except Exception as audit_exc:
            log.error("could not audit a refused tap: %s", type(audit_exc).__name__)
        raise
    [stored] = [c for c in credentials if c.credential_id == outcome.credential_id]
    tap = VerifiedTap(
        browser=ctx.browser_label, owner=ctx.browser_label, credential=stored,
        new_sign_count=outcome.new_sign_count, user_verified=outcome.user_verified,
    )  # fmt: skip
    if action in _CONFIRM_KEYS:
        operations.record_tap(ctx.trust, key, tap, now)
        # The record may have changed while the person tapped: check the policy once more.
        _require_confirm_policy(ctx.trust.effective(), action)
        fields: dict[str, Any] = {"origin": parsed["origin"]}
        if action == "confirm.eval":
            fields["evalSha256"] = hashlib.sha256(parsed["code"].encode("utf-8")).hexdigest()
        else:
            fields["file"] = parsed["path"]
        ctx.trust.audit().append(
            event, decision="granted", path=tap.path, **tap.audit_fields(), **fields
        )
        log.info("presence_complete: %s confirmed for browser %r", action, ctx.browser_label)
        return {"done": True}
    if action == "pair_client":
        epoch = operations.pair_client(
            ctx.trust, tap, label=parsed["label"], exe=parsed["exe"], sha256=parsed["sha256"],
            now=now,
        )  # fmt: skip
    elif action == "policy.widen":
        epoch = operations.widen(ctx.trust, tap, parsed, now)
    else:
        epoch = operations.release_kill(ctx.trust, tap, now)
    log.info("presence_complete: %s done for browser %r", action, ctx.browser_label)
    return {"done": True, "epoch": epoch}


def origin_decide(ctx: PairingContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: what approving ``origin`` takes for this browser (``trust.operations
    .decide_origin``): ``none``, a ``tap`` over the returned ``policy.widen`` detail, or a
    ``click``. Refused while killed, unpaired or unreadable."""
    origin = _string_arg(args, "origin", MAX_ORIGIN_CHARS)
    try:
        return operations.decide_origin(ctx.trust, ctx.browser_label, origin).to_json()
    except PolicyError:
        raise BadHostCall("origin must be an http(s) origin") from None


def clients_recent(ctx: PairingContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: the paired MCP clients and the recently seen spawners (for pairing by tap)."""
    from tabwarden.mcp_server.spawner import recent_spawners

    eff = _view(ctx, "clients_recent")
    recent = recent_spawners(ctx.config_dir) if ctx.config_dir is not None else []
    return {
        "clients": [
            {"label": c.label, "exe": c.exe, "sha256": c.sha256, "pairedAt": c.paired_at}
            for c in eff.paired_clients
        ],
        "recent": [s.as_dict() for s in recent],
    }


def client_revoke(ctx: PairingContext, args: dict[str, Any], now: int) -> dict[str, Any]:
    """Forget a paired MCP client (free: removing power needs no tap). Its live connection is cut
    by the host's trust watch as the epoch moves; a label nobody holds is ``bad_request``."""
    label = args.get("label")
    if not isinstance(label, str) or not LABEL_RE.match(label):
        raise BadHostCall("label must be a client label (a-z, 0-9, _ and -; at most 32)")
    eff = operations.require_readable(ctx.trust)
    if not any(c.label == label for c in eff.paired_clients):
        raise BadHostCall(f"no paired client is labelled {label!r}")
    epoch = operations.revoke(ctx.trust, "client", label, now, browser=ctx.browser_label)
    log.warning("client %r revoked from browser %r", label, ctx.browser_label)
    return {"done": True, "epoch": epoch}


def policy_restrict(ctx: PairingContext, args: dict[str, Any], now: int) -> dict[str, Any]:
    """Narrow one key (free). A value that would widen is refused ``policy_invalid``."""
    key_name = args.get("key")
    if not isinstance(key_name, str) or not key_name or len(key_name) > 64:
        raise BadHostCall("key must be a policy key")
    if "value" not in args:
        raise BadHostCall("value is required")
    epoch = operations.restrict(
        ctx.trust, {key_name: args["value"]}, now, browser=ctx.browser_label
    )
    return {"done": True, "epoch": epoch}


def kill(ctx: PairingContext, args: dict[str, Any], now: int) -> dict[str, Any]:
    """Engage the kill switch (free). Before pairing, the latch file is the record."""
    epoch = operations.kill(ctx.trust, KILL_REASON, now, browser=ctx.browser_label)
    log.warning("kill switch engaged from browser %r", ctx.browser_label)
    return {"done": True, "epoch": epoch}


def audit_tail(ctx: PairingContext, args: dict[str, Any]) -> dict[str, Any]:
    """Read-only: the last ``limit`` audit entries, newest last (``truncated`` when the size bound
    dropped older ones). Entries were redacted when written; they are redacted again here."""
    from tabwarden.trust.audit import UnsafeAuditLog, redact_fields

    limit = args.get("limit")
    if limit is None:
        limit = AUDIT_TAIL_DEFAULT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= AUDIT_TAIL_MAX:
        raise BadHostCall(f"limit must be an integer from 1 to {AUDIT_TAIL_MAX}")
    try:
        records = ctx.trust.audit().read(limit)
    except (UnsafeAuditLog, OSError) as exc:
        log.warning("audit_tail: the audit log is unreadable (%s)", type(exc).__name__)
        raise TrustUnreadable("the audit log is unreadable; see `tabwarden status`") from None
    entries: list[dict[str, Any]] = []
    size = 0
    truncated = False
    for record in reversed(records):
        entry = redact_fields(record)
        size += len(json.dumps(entry, ensure_ascii=True, default=str)) + 1
        if size > AUDIT_TAIL_MAX_BYTES:
            truncated = True
            break
        entries.append(entry)
    entries.reverse()
    return {"entries": entries, "truncated": truncated}
