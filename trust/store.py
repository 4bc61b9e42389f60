"""The trust record's writers: every change to ``trust.json``, each one locked ``update``.

Narrowing writers (``engage_kill``, ``add_restrictions``, ``revoke``, keyless ``rollback``) need no
key. Grant writers (``add_client``, ``add_browser_credential``, ``set_baseline``, ``release_kill``,
keyed ``rollback``, ``initialise``) take the ``HostKey``; they are called only from the trust
operations (``operations.py``), which hold the person's proof. Each writer validates its input
and re-checks inside the lock what it depends on (a restriction that would widen is refused
there, against the record as it is at write time). File I/O lives in ``record_file``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tabwarden.errors import TabwardenError, UsageError
from tabwarden.paths import LABEL_RE, BadLabel
from tabwarden.protocol.codes import PRESENCE_REFUSED, PRESENCE_REQUIRED
from tabwarden.trust.grants import grant_is_valid, sign_grant
from tabwarden.trust.keys import HostKey, HostKeyInvalid, HostPublicKey
from tabwarden.trust.policy import (
    DEFAULT_POLICY,
    POLICY_KEYS,
    Policy,
    PolicyError,
    is_narrowing,
    is_wider,
    validate_value,
    validate_values,
)
from tabwarden.trust.ratchet import kill_level
from tabwarden.trust.record import (
    REVOCABLE,
    BaselineRecord,
    BrowserRecord,
    ClientRecord,
    CodeBinding,
    Credential,
    KillEvent,
    KillState,
    PairingCode,
    ReleaseRecord,
    Restriction,
    Revocation,
    TrustDocument,
    TrustUnreadable,
    TwoFactorLatch,
    empty_document,
)
from tabwarden.trust.record_file import update
from tabwarden.trust.verify import Effective, effective, host_key_mismatch

__all__ = [
    "AUTH_PATHS",
    "accept_record",
    "MAX_HISTORY",
    "PAIRING_MAX_ATTEMPTS",
    "PresenceRequired",
    "PolicyError",
    "TrustUnreadable",
    "add_browser_credential",
    "add_client",
    "add_restriction",
    "add_restrictions",
    "clear_pairing_code",
    "consume_pairing_code",
    "engage_kill",
    "initialise",
    "release_kill",
    "revoke",
    "rollback",
    "set_baseline",
    "set_pairing_code",
]

#: Earlier baselines kept for ``rollback`` (oldest dropped first).
MAX_HISTORY = 50
PAIRING_MAX_ATTEMPTS = 5
#: Which presence path authorised a grant (matches the audit log's ``path``).
AUTH_PATHS = ("terminal", "webauthn", "window")

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class PresenceRequired(TabwardenError):
    """This change widens what tabwarden may do, so a person must confirm it."""

    code = PRESENCE_REQUIRED
    exit_status = 1
    hint = "Run it at a real terminal (or confirm in the browser); removing power never needs this."


# --- helpers shared by the writers -----------------------------------------------------------


def _public_in(doc: TrustDocument) -> HostPublicKey:
    try:
        return HostPublicKey.from_b64(doc.host_key.public)
    except HostKeyInvalid:
        raise TrustUnreadable("hostKey.public in the record is not a valid P-256 key") from None


def _require_key(doc: TrustDocument, key: HostKey) -> HostPublicKey:
    public = key.public
    mismatch = host_key_mismatch(doc, public)
    if mismatch is not None:
        raise TrustUnreadable(mismatch)
    return public


def _next_kill_serial(doc: TrustDocument) -> int:
    """Above every serial in the file, valid or not — so a new kill always takes."""
    return 1 + kill_level(doc)


def _usable_baseline(doc: TrustDocument, public: HostPublicKey) -> Policy:
    """The signed baseline's policy, or ``DEFAULT_POLICY`` (exactly as ``effective`` decides)."""
    b = doc.policy.baseline
    if b is None or b.epoch > doc.epoch or not grant_is_valid(public, b.to_json()):
        return DEFAULT_POLICY
    try:
        return validate_values(b.values_json())
    except PolicyError:
        return DEFAULT_POLICY


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value


def _with_baseline(
    doc: TrustDocument,
    key: HostKey,
    policy: Policy,
    now: int,
    set_keys: frozenset[str] = frozenset(),
) -> TrustDocument:
    public = _require_key(doc, key)
    eff = effective(doc, public, now)
    old = _usable_baseline(doc, public)
    signed = sign_grant(
        key,
        {"kind": "baseline", "values": policy.to_json()},
        epoch=doc.epoch + 1,
        kill_serial=eff.kill_serial,
    )
    record = BaselineRecord(
        values=tuple(sorted((k, _frozen(v)) for k, v in signed["values"].items())),
        epoch=signed["epoch"],
        kill_serial=signed["killSerial"],
        sig=signed["sig"],
    )
    history = doc.policy.history
    if doc.policy.baseline is not None:
        history = (*history, doc.policy.baseline)[-MAX_HISTORY:]
    changed = {k for k in POLICY_KEYS if policy[k] != old[k]} | set_keys
    restrictions = tuple(r for r in doc.policy.restrictions if r.key not in changed)
    return doc.with_(
        policy=replace(doc.policy, baseline=record, history=history, restrictions=restrictions)
    )


def _check_label(label: str) -> None:
    if not isinstance(label, str) or not LABEL_RE.match(label):
        raise BadLabel(f"invalid label {label!r}")


def _check_via(via: str) -> None:
    if via not in AUTH_PATHS:
        raise UsageError(f"unknown authorisation path {via!r}; expected one of {AUTH_PATHS}")


def _check_time(now: int) -> None:
    if type(now) is not int or now < 0:
        raise UsageError("timestamps are non-negative integer seconds")


# --- narrowing writers (no key) --------------------------------------------------------------


def engage_kill(path: Path | str, reason: str, now: int) -> TrustDocument:
    """Engage the kill switch (a new, higher serial and an event). Needs no key."""
    _check_time(now)
    if not isinstance(reason, str) or not reason.isprintable() or not 0 < len(reason) <= 256:
        raise UsageError("the kill reason must be 1-256 printable characters")

    def mutate(doc: TrustDocument) -> TrustDocument:
        serial = _next_kill_serial(doc)
        event = KillEvent(serial=serial, at=now, reason=reason)
        return doc.with_(kill=KillState(serial=serial, events=(*doc.kill.events, event)))

    return update(path, mutate)


def add_restrictions(path: Path | str, changes: Mapping[str, object], now: int) -> TrustDocument:
    """Narrow every key of ``changes`` (unsigned), all or nothing, in one write. The one check
    that a restriction narrows: against the record as it is inside the lock; a value that would
    widen is refused (``PolicyError``) and nothing is written."""
    _check_time(now)
    if not changes:
        raise UsageError("name at least one policy key to restrict")
    normalised = {key: validate_value(key, value) for key, value in changes.items()}

    def mutate(doc: TrustDocument) -> TrustDocument:
        current = effective(doc, _public_in(doc), now).policy
        for key, value in normalised.items():
            if not is_narrowing(current, key, value):
                raise PolicyError(
                    f"restricting {key} to that value would widen the policy; widening needs a "
                    "person (`tabwarden policy set`, or a tap on the options page)"
                )
        added = tuple(Restriction(key=k, value=v, at=now) for k, v in normalised.items())
        return doc.with_(
            policy=replace(doc.policy, restrictions=(*doc.policy.restrictions, *added))
        )

    return update(path, mutate)


def add_restriction(path: Path | str, key: str, value: object, now: int) -> TrustDocument:
    """``add_restrictions`` for one key."""
    return add_restrictions(path, {key: value}, now)


def revoke(path: Path | str, kind: str, label: str, now: int) -> TrustDocument:
    """Revoke every ``kind`` ("client"|"browser") grant named ``label``: removes the grants and
    records the revocation at this write's epoch, so a re-inserted copy of any of them stays
    revoked (pairing the label again later signs a newer grant). Needs no key."""
    _check_time(now)
    if kind not in REVOCABLE:
        raise UsageError(f"can only revoke {' or '.join(REVOCABLE)}, not {kind!r}")
    if not isinstance(label, str) or not 0 < len(label) <= 64:
        raise BadLabel(f"invalid label {label!r}")

    def mutate(doc: TrustDocument) -> TrustDocument:
        # The client grant it removes, as signed: the revoked client is then told it was revoked
        # (``trust.refusal``). At most one grant holds a label (``add_client`` replaces).
        revoked = [c for c in doc.clients if c.label == label] if kind == "client" else []
        revocation = Revocation(
            kind=kind,
            label=label,
            at=now,
            epoch=doc.epoch + 1,
            client=revoked[-1] if revoked else None,
        )
        changes: dict[str, Any] = {"revocations": (*doc.revocations, revocation)}
        if kind == "client":
            changes["clients"] = tuple(c for c in doc.clients if c.label != label)
        else:
            changes["browsers"] = tuple(b for b in doc.browsers if b.label != label)
        return doc.with_(**changes)

    return update(path, mutate)


# --- grant writers (the host key; presence proven by the caller) ------------------------------


def initialise(
    path: Path | str, key: HostKey, store: str, now: int, *, replace_existing: bool = False
) -> TrustDocument:
    """Write a fresh record for ``key`` with the signed default baseline (``pair``).

    An existing record is refused unless ``replace_existing`` (re-pairing, a presence-proven
    ceremony): every old grant is dropped (a new key makes them meaningless); the epoch and the
    kill serial carry on so running readers see no regression, and the kill switch is released
    at that serial by the new key. Re-pairing also replaces a record the ratchet refuses
    (rolled back, edited, vanished): the epoch and kill serial then carry on from the seal's.
    """
    _check_time(now)
    fresh = empty_document(key.public, store)

    def mutate(doc: TrustDocument) -> TrustDocument:
        if doc is fresh:
            return _with_baseline(fresh, key, DEFAULT_POLICY, now)
        # ``fresh`` raised to a seal's floors (a first record over a vanished one) is re-pairing.
        over_seal = replace(doc, epoch=fresh.epoch, kill=fresh.kill) == fresh
        if not replace_existing and not over_seal:
            raise UsageError(f"{path} already exists; re-pairing must replace it explicitly")
        level = _next_kill_serial(doc) - 1
        base = replace(fresh, epoch=doc.epoch, kill=KillState(serial=level))
        base = _with_baseline(base, key, DEFAULT_POLICY, now)
        if level == 0:
            return base
        signed = sign_grant(
            key, {"kind": "release", "serial": level}, epoch=doc.epoch + 1, kill_serial=level
        )
        release = ReleaseRecord(
            serial=level, epoch=signed["epoch"], kill_serial=level, sig=signed["sig"]
        )
        return base.with_(releases=(release,))

    return update(path, mutate, initial=fresh, accept_tampered=replace_existing)


def add_client(
    path: Path | str,
    key: HostKey,
    label: str,
    exe: str,
    sha256: str,
    now: int,
    *,
    via: str = "terminal",
) -> TrustDocument:
    """Pair an MCP client harness (replaces a grant with the same label; a revocation of the
    label keeps revoking the grants signed before this one, ``_outlived``)."""
    _check_time(now)
    _check_label(label)
    _check_via(via)
    if not isinstance(exe, str) or not exe.startswith("/") or len(exe) > 4096:
        raise UsageError("exe must be an absolute path")
    if not isinstance(sha256, str) or not _HEX64.match(sha256):
        raise UsageError("sha256 must be 64 lower-case hex digits")

    def mutate(doc: TrustDocument) -> TrustDocument:
        public = _require_key(doc, key)
        eff = effective(doc, public, now)
        grant = {
            "kind": "client",
            "label": label,
            "exe": exe,
            "sha256": sha256,
            "pairedAt": now,
            "path": via,
        }
        signed = sign_grant(key, grant, epoch=doc.epoch + 1, kill_serial=eff.kill_serial)
        record = ClientRecord(
            label=label,
            exe=exe,
            sha256=sha256,
            paired_at=now,
            path=via,
            epoch=signed["epoch"],
            kill_serial=signed["killSerial"],
            sig=signed["sig"],
        )
        return doc.with_(
            clients=(*(c for c in doc.clients if c.label != label), record),
            revocations=_outlived(doc, "client", label),
        )

    return update(path, mutate)


def _outlived(doc: TrustDocument, kind: str, label: str) -> tuple[Revocation, ...]:
    """``doc``'s revocations as they stand once ``label`` is paired again in this write: a
    revocation without an epoch (written before revocations carried one) is pinned to
    ``doc.epoch``, so it keeps revoking every grant signed before this write — a re-inserted
    copy of one stays revoked — while the new grant, signed at ``doc.epoch + 1``, is not."""
    return tuple(
        replace(r, epoch=doc.epoch)
        if r.kind == kind and r.label == label and r.epoch is None
        else r
        for r in doc.revocations
    )


def _with_browser(
    doc: TrustDocument,
    key: HostKey,
    kill_serial: int,
    label: str,
    credentials: tuple[Credential, ...],
    window_only: bool,
) -> TrustDocument:
    """``doc`` with browser ``label``'s grant replaced by a freshly signed one (newer than any
    revocation of that label: pairing it again is the point; the old grants stay revoked)."""
    grant: dict[str, Any] = {
        "kind": "browser",
        "label": label,
        "credentials": [c.to_json() for c in credentials],
    }
    if window_only:
        grant["windowOnly"] = True
    signed = sign_grant(key, grant, epoch=doc.epoch + 1, kill_serial=kill_serial)
    record = BrowserRecord(
        label=label,
        credentials=credentials,
        window_only=window_only,
        epoch=signed["epoch"],
        kill_serial=signed["killSerial"],
        sig=signed["sig"],
    )
    latch = doc.two_factor
    if credentials and latch is None:  # the first authenticator under this key: latch for good
        sealed = sign_grant(
            key, {"kind": "twoFactor"}, epoch=doc.epoch + 1, kill_serial=kill_serial
        )
        latch = TwoFactorLatch(
            epoch=sealed["epoch"], kill_serial=sealed["killSerial"], sig=sealed["sig"]
        )
    return doc.with_(
        browsers=(*(b for b in doc.browsers if b.label != label), record),
        revocations=_outlived(doc, "browser", label),
        two_factor=latch,
    )


def _enrolled(eff: Effective, label: str) -> tuple[Credential, ...]:
    """The credentials browser ``label`` holds in grants that count (validly signed, not
    revoked): a revoked grant left in the file, or put back, is never carried forward."""
    return tuple(c for b in eff.browsers if b.label == label for c in b.credentials)


def add_browser_credential(
    path: Path | str,
    key: HostKey,
    label: str,
    credential: Credential,
    now: int,
    *,
    enrolled_only: bool = False,
) -> TrustDocument:
    """Pair browser ``label`` or enrol one more credential for it (re-signs its grant).

    A credential with the same id replaces the old one (e.g. a newer sign count). Enrolling a
    credential ends window-only mode for good (never the other way round). ``enrolled_only``
    (a tap's new sign count): the credential must still be enrolled for ``label`` in the record
    as it is now, else ``NotEnrolled`` and nothing is written — a tap verified just before
    ``revoke browser`` never re-creates the revoked grant."""
    _check_time(now)
    _check_label(label)
    _check_via(credential.path)

    def mutate(doc: TrustDocument) -> TrustDocument:
        public = _require_key(doc, key)
        eff = effective(doc, public, now)
        previous = _enrolled(eff, label)
        if enrolled_only and all(c.credential_id != credential.credential_id for c in previous):
            raise NotEnrolled(f"that credential is no longer enrolled for browser {label!r}")
        creds = (*(c for c in previous if c.credential_id != credential.credential_id), credential)
        return _with_browser(doc, key, eff.kill_serial, label, creds, window_only=False)

    return update(path, mutate)


class NotEnrolled(TabwardenError):
    """That credential is not enrolled (any more): a tap from it authorises nothing."""

    code = PRESENCE_REFUSED
    exit_status = 1
    hint = "Confirm again with an authenticator this browser still has enrolled."


class AlreadyEnrolled(TabwardenError):
    """The browser holds an enrolled credential: it is never downgraded to window-only."""

    code = PRESENCE_REFUSED
    exit_status = 1
    hint = "An enrolled browser confirms with its authenticator; `revoke browser LABEL` first."


def add_window_only_browser(path: Path | str, key: HostKey, label: str, now: int) -> TrustDocument:
    """Pair browser ``label`` without an authenticator ("window-only": its confirmations are the
    extension's window, a software confirmation). Refused with ``AlreadyEnrolled`` when the label
    already holds a credential in a valid grant: an enrolled browser is never downgraded."""
    _check_time(now)
    _check_label(label)

    def mutate(doc: TrustDocument) -> TrustDocument:
        public = _require_key(doc, key)
        eff = effective(doc, public, now)
        if _enrolled(eff, label):
            raise AlreadyEnrolled(f"browser {label!r} is enrolled with a credential")
        return _with_browser(doc, key, eff.kill_serial, label, (), window_only=True)

    return update(path, mutate)


def set_baseline(
    path: Path | str,
    key: HostKey,
    values: dict[str, object],
    now: int,
    *,
    set_keys: Iterable[str] = (),
) -> TrustDocument:
    """Sign a new baseline (``policy set``; may widen). The previous baseline goes to history.

    Restrictions on keys whose value the new baseline changes, and on ``set_keys`` (the keys the
    person just set, even back to the old signed value), are dropped; restrictions on other keys
    keep narrowing. Callers normally pass ``apply_set(effective.policy, changes).to_json()`` and
    ``set_keys=changes``."""
    _check_time(now)
    policy = validate_values(values)
    keys = frozenset(set_keys)
    unknown = sorted(keys - set(POLICY_KEYS))
    if unknown:
        raise UsageError(f"unknown policy key {unknown[0]!r}")
    return update(path, lambda doc: _with_baseline(doc, key, policy, now, keys))


def release_kill(path: Path | str, key: HostKey, now: int) -> TrustDocument:
    """Release the kill switch up to the current kill serial (``unkill``)."""
    _check_time(now)

    def mutate(doc: TrustDocument) -> TrustDocument:
        public = _require_key(doc, key)
        level = effective(doc, public, now).kill_serial
        signed = sign_grant(
            key, {"kind": "release", "serial": level}, epoch=doc.epoch + 1, kill_serial=level
        )
        record = ReleaseRecord(
            serial=level, epoch=signed["epoch"], kill_serial=level, sig=signed["sig"]
        )
        return doc.with_(releases=(*doc.releases, record))

    return update(path, mutate)


def accept_record(path: Path | str, key: HostKey, now: int) -> TrustDocument:
    """Take the record as it is now, after the ratchet refused it (``unkill`` at a terminal):
    rewritten at an epoch above both the record's and the seal's, with a fresh seal and the kill
    switch released at a serial above both (signed). Its grants still count only if their
    signatures verify against ``key``. A record whose host key is not ``key`` is refused."""
    _check_time(now)

    def mutate(doc: TrustDocument) -> TrustDocument:
        _require_key(doc, key)
        level = kill_level(doc)
        signed = sign_grant(
            key, {"kind": "release", "serial": level}, epoch=doc.epoch + 1, kill_serial=level
        )
        release = ReleaseRecord(
            serial=level, epoch=signed["epoch"], kill_serial=level, sig=signed["sig"]
        )
        return doc.with_(kill=replace(doc.kill, serial=level), releases=(*doc.releases, release))

    return update(path, mutate, accept_tampered=True)


def rollback(path: Path | str, key: HostKey | None, n: int, now: int) -> TrustDocument:
    """Return the policy to the baseline ``n`` steps back in history (1 = the previous one).

    Re-derived as a fresh write, never by restoring old bytes. Without a key only a narrowing
    rollback is possible (written as restrictions); a target wider than the current effective
    policy raises ``PresenceRequired`` and writes nothing. With the key the target is re-signed
    as a new baseline (the caller proved presence)."""
    _check_time(now)
    if type(n) is not int or n < 1:
        raise UsageError("rollback needs a step count of at least 1")

    def mutate(doc: TrustDocument) -> TrustDocument:
        public = _require_key(doc, key) if key is not None else _public_in(doc)
        history = doc.policy.history
        if n > len(history):
            raise PolicyError(f"there are only {len(history)} earlier baselines to roll back to")
        entry = history[-n]
        if not grant_is_valid(public, entry.to_json()):
            raise PolicyError("that history entry's signature does not verify; refusing it")
        target = validate_values(entry.values_json())
        current = effective(doc, public, now).policy
        if key is None:
            if is_wider(target, current):
                raise PresenceRequired(
                    "rolling back to that baseline would widen the policy; it needs a person "
                    "present (run `tabwarden policy rollback` at a terminal)"
                )
            added = tuple(
                Restriction(key=k, value=target[k], at=now)
                for k in POLICY_KEYS
                if target[k] != current[k]
            )
            return doc.with_(
                policy=replace(doc.policy, restrictions=(*doc.policy.restrictions, *added))
            )
        return _with_baseline(doc, key, target, now)

    return update(path, mutate)


# --- the pairing code (stored hashed) --------------------------------------------------------


def set_pairing_code(
    path: Path | str,
    code_sha256_hex: str,
    expires_at: int,
    *,
    bind: tuple[HostKey, str] | None = None,
) -> TrustDocument:
    """Store the one-time pairing code as its SHA-256 (never the code itself), replacing any
    pending one. ``bind=(key, browser)``: a signed ``CodeBinding`` — the code pairs only that
    browser label (``pair --browser``; the caller proved a person is present)."""
    _check_time(expires_at)
    if not isinstance(code_sha256_hex, str) or not _HEX64.match(code_sha256_hex):
        raise UsageError("the pairing code must be given as 64 lower-case hex digits (SHA-256)")
    code = PairingCode(sha256=code_sha256_hex, expires_at=expires_at, attempts=0)
    if bind is None:
        return update(path, lambda doc: doc.with_(pairing_code=code))
    key, browser = bind
    _check_label(browser)

    def mutate(doc: TrustDocument) -> TrustDocument:
        public = _require_key(doc, key)
        grant = {
            "kind": "codeBinding",
            "browser": browser,
            "sha256": code_sha256_hex,
            "expiresAt": expires_at,
        }
        level = effective(doc, public, expires_at).kill_serial  # no rule reads the clock
        signed = sign_grant(key, grant, epoch=doc.epoch + 1, kill_serial=level)
        binding = CodeBinding(
            browser=browser,
            epoch=signed["epoch"],
            kill_serial=signed["killSerial"],
            sig=signed["sig"],
        )
        return doc.with_(pairing_code=replace(code, binding=binding))

    return update(path, mutate)


def clear_pairing_code(path: Path | str) -> TrustDocument:
    return update(path, lambda doc: doc.with_(pairing_code=None))


def consume_pairing_code(path: Path | str, code: str, now: int) -> PairingCode | None:
    """The stored code, once, for the right unexpired code (else None); every attempt counts,
    and the code is cleared on success, expiry or after ``PAIRING_MAX_ATTEMPTS`` attempts. The
    caller refuses a code whose ``browser`` is not the browser presenting it (already spent)."""
    _check_time(now)
    offered = hashlib.sha256(code.encode("utf-8")).hexdigest() if isinstance(code, str) else ""
    result: PairingCode | None = None

    def mutate(doc: TrustDocument) -> TrustDocument:
        nonlocal result
        pc = doc.pairing_code
        if pc is None:
            return doc
        if now >= pc.expires_at:
            return doc.with_(pairing_code=None)
        if hmac.compare_digest(offered, pc.sha256):
            result = pc
            return doc.with_(pairing_code=None)
        attempts = pc.attempts + 1
        if attempts >= PAIRING_MAX_ATTEMPTS:
            return doc.with_(pairing_code=None)
        return doc.with_(pairing_code=replace(pc, attempts=attempts))

    update(path, mutate)
    return result
