"""What a WebAuthn tap authorises over hop 3 (docs/protocol.md, "What a tap authorises"):

``presence_begin {action, detail}`` / ``presence_complete {challengeId, action, detail,
response}`` — an assertion from this host's own browser credential, bound to exactly one
``policy.widen`` (detail = canonical JSON of the changes) or ``unkill`` (detail ``""``); also
``confirm.eval`` / ``confirm.upload`` (canonical ``{code, origin}`` / ``{origin, path}``; only
when the signed policy already enables eval / upload with ``presenceConfirm``, else
``policy_denied``: the host verifies, stores the counter and answers ``{done}``, nothing more);
``confirm.provenance`` (canonical ``{origin, sha256, sources}``: an enrolled browser's answer to
the provenance gate, only while policy ``provenance`` is ``confirm``; likewise nothing more)
and ``pair_client`` (canonical ``{exe, label, sha256}``; a client grant, path ``webauthn``).

The detail must be exactly the canonical form of what it names, checked before any ceremony.
User presence is required; user verification when the credential verified the user at
enrolment (``Credential.uv``). The verified tap (``VerifiedTap``) goes to the trust operation,
which stores the new sign count before the action runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from tabwarden.host import calls
from tabwarden.host.calls import BadHostCall, HostCallContext, PolicyDenied, log
from tabwarden.paths import LABEL_RE
from tabwarden.trust import operations
from tabwarden.trust.canonical import canonical
from tabwarden.trust.operations import VerifiedTap
from tabwarden.trust.policy import PolicyError, apply_set, normalise_origin, validate_value
from tabwarden.trust.presence import (
    Challenge,
    PresenceRefused,
    begin_assertion,
    complete_assertion,
)
from tabwarden.trust.refusal import switch_off
from tabwarden.trust.verify import Effective

#: What a tap may authorise over hop 3 (a subset of ``trust.presence.ACTIONS``).
PRESENCE_ACTIONS = (
    "policy.widen",
    "unkill",
    "confirm.eval",
    "confirm.upload",
    "confirm.provenance",
    "pair_client",
)


#: The canonical JSON of a whole policy change (1000 origins of 300 chars fit comfortably).
MAX_DETAIL_CHARS = 512 * 1024


#: ``confirm.eval`` names the full code: at most 100000 characters, each at most a 6-char escape.
MAX_EVAL_CODE_CHARS = 100_000


MAX_EVAL_DETAIL_CHARS = 6 * MAX_EVAL_CODE_CHARS + 4096


MAX_UPLOAD_PATH_CHARS = 4096


MAX_EXE_CHARS = 4096


_HEX64 = re.compile(r"^[0-9a-f]{64}$")


#: The policy key each confirm action needs enabled (with ``presenceConfirm: true``).
_CONFIRM_KEYS = {"confirm.eval": "eval", "confirm.upload": "upload"}

#: ``confirm.provenance``: most source origins named, and the longest one.
MAX_PROVENANCE_SOURCES = 8
MAX_SOURCE_CHARS = 300
#: A source whose page is not known (mcp_server/provenance.py ``UNKNOWN_ORIGIN``).
_UNKNOWN_SOURCE = "unknown"


#: Actions whose tap replaces a confirm window's click (nothing is performed but the answer).
_CONFIRM_ACTIONS = frozenset({*_CONFIRM_KEYS, "confirm.provenance"})


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


def _provenance_detail(detail: Any) -> dict[str, Any]:
    """``confirm.provenance`` → ``{origin, sha256, sources}``: the target's exact origin, the
    SHA-256 of the address or typed value (never the value itself), and the other origins whose
    pages supplied it (sorted, distinct, 1 to ``MAX_PROVENANCE_SOURCES``)."""
    value = _canonical_object(detail, frozenset({"origin", "sha256", "sources"}), MAX_DETAIL_CHARS)
    sources = value["sources"]
    if (
        not isinstance(sources, list)
        or not 1 <= len(sources) <= MAX_PROVENANCE_SOURCES
        or not all(isinstance(s, str) and 0 < len(s) <= MAX_SOURCE_CHARS for s in sources)
        or sources != sorted(set(sources))
    ):
        raise BadHostCall("sources must be the sorted, distinct origins that supplied the value")
    for source in sources:
        if source != _UNKNOWN_SOURCE:
            _exact_origin(source)
    if not isinstance(value["sha256"], str) or not _HEX64.match(value["sha256"]):
        raise BadHostCall("sha256 must be 64 lower-case hex digits")
    _exact_origin(value["origin"])
    if value["origin"] in sources:
        raise BadHostCall("a source of the same origin as the target needs no confirmation")
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
    if action == "confirm.provenance":
        return _provenance_detail(detail)
    if action == "pair_client":
        return _client_detail(detail)
    return _changes(action, detail)


def _require_confirm_policy(eff: Effective, action: str) -> None:
    """A tap replaces the confirm window's click; it never turns on what the policy keeps off."""
    if eff.killed:
        log.warning("%s refused: the kill switch is engaged", action)
        raise PolicyDenied("the kill switch is engaged; a person lifts it with `tabwarden unkill`")
    if action == "confirm.provenance":
        if eff.policy.provenance != "confirm":
            log.warning("%s refused: policy provenance is not confirm", action)
            raise PolicyDenied(
                switch_off("provenance", "confirming page-supplied values", eff.policy)
            )
        return
    key = _CONFIRM_KEYS[action]
    if not getattr(eff.policy, key):
        log.warning("%s refused: the policy does not allow %s", action, key)
        raise PolicyDenied(switch_off(key, f"page_{key}", eff.policy))
    if not eff.policy.presence_confirm:
        log.warning("%s refused: the policy does not confirm %s with a tap", action, key)
        raise PolicyDenied(
            switch_off("presenceConfirm", f"confirming page_{key} with a tap", eff.policy)
        )


def presence_begin(
    ctx: HostCallContext, args: dict[str, Any], now: int
) -> tuple[dict[str, Any], Challenge]:
    """Mint an assertion challenge for exactly (action, detail, this browser)."""
    action = _presence_action(args)
    detail = args.get("detail")
    _parsed_detail(action, detail)
    _, eff = calls.paired_key(ctx)
    if action in _CONFIRM_ACTIONS:
        _require_confirm_policy(eff, action)
    credentials = calls.own_credentials(ctx, eff)
    if not credentials:
        log.warning("presence_begin refused: browser %r has no credential", ctx.browser_label)
        raise PresenceRefused("no enrolled credential for this browser", "not_enrolled")
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
    "confirm.provenance": "confirm_provenance",
    "pair_client": "pair_client",
}


def presence_complete(
    ctx: HostCallContext, challenge: Challenge | None, args: dict[str, Any], now: int
) -> dict[str, Any]:
    """Verify the tap against ``challenge`` (already taken from the book, single use), store the
    new sign count, then perform the action. Nothing is written when the tap is refused."""
    action = _presence_action(args)
    detail = args.get("detail")
    parsed = _parsed_detail(action, detail)
    event = _AUDIT_EVENT[action]
    key, eff = calls.paired_key(ctx)
    if action == "policy.widen":
        apply_set(eff.policy, parsed)  # policy_invalid before any ceremony
    elif action in _CONFIRM_ACTIONS:
        _require_confirm_policy(eff, action)  # policy_denied before any ceremony
    credentials = calls.own_credentials(ctx, eff)
    try:
        if challenge is None:
            raise PresenceRefused("unknown, used or expired challenge id", "challenge_stale")
        response = args.get("response")
        if not isinstance(response, dict):
            raise PresenceRefused("response is not an object", "malformed")
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
    if action in _CONFIRM_ACTIONS:
        operations.record_tap(ctx.trust, key, tap, now)
        # The record may have changed while the person tapped: check the policy once more.
        _require_confirm_policy(ctx.trust.effective(), action)
        fields: dict[str, Any] = {"origin": parsed["origin"]}
        if action == "confirm.eval":
            fields["evalSha256"] = hashlib.sha256(parsed["code"].encode("utf-8")).hexdigest()
        elif action == "confirm.provenance":
            fields["sources"] = parsed["sources"]  # the value's hash stays out of the log
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
