"""Trust operations: every way power is granted or removed, each written once.

Each operation is the whole recipe — refusal check → validation → the write (signed with the host
key for a grant, unsigned for a narrowing) → an audit entry naming the proof's path. The callers
keep only their ceremony: the CLI (``tabwarden.cli.commands``) asks for a phrase at a real terminal
and prints; the host (``tabwarden.host``: ``pairing``, ``taps``, ``free_calls``) parses the
extension's arguments and verifies WebAuthn; the extension asks and shows.

A grant takes a *proof*: a frozen value saying how a person was present —

* ``TerminalPhrase`` — the phrase was typed at a real terminal (``tabwarden.cli.ceremony``);
* ``VerifiedTap`` — a WebAuthn assertion the host verified for exactly this action
  (``trust.presence.complete_assertion``); its new sign count is stored before the action;
* ``WindowClick`` — a click in the extension's confirm window (software confirmation);
* ``TerminalAndTap`` — both of the first two, for exactly one action: what a grant started at the
  terminal takes once the record holds an enrolled authenticator.

The two-factor rule (``_take_proof``, for every grant): while any browser in the record holds an
enrolled credential, a ``TerminalPhrase`` alone is refused (``SecondFactorRequired``, audited,
nothing written) — a same-user program can open its own pty and type a phrase, it cannot touch
the security key. A record that cannot be read refuses the phrase alone too (fail closed). With
no authenticator ever enrolled under this host key (window-only pairings) the phrase alone
remains the proof. Once one was, the record is latched (its signed ``twoFactor``, mirrored in the
seal): revoking every authenticator (``revoke`` is free) does not bring the phrase alone back —
it is refused (``SecondFactorLost``) until ``pair --reset`` writes a new, unlatched record.

``pair_host`` is outside the rule, ``reset`` included, because a reset is a narrowing: it drops
every grant (clients, browsers, their authenticators, baselines) and re-signs none, keeps an
engaged kill switch, and its new key is refused by every browser that paired before (each pinned
the old one) until the person pairs that browser again at its options page. A tap could not guard
it anyway: it is the way out of a record that cannot be read or is refused, which a tap is
verified against. It is also the one way to clear the two-factor latch: it leaves nothing to
widen from.

Removing power (kill, restrict, revoke, a narrowing rollback) takes no proof and no key.

Nothing here may write a grant without a proof, widen through a narrowing entry point, write
anything when a check fails, or put a secret (key material, the one-time code, a nonce, an
assertion) into an audit entry or an error message.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from tabwarden.errors import StorageFull, TabwardenError, UsageError
from tabwarden.protocol.codes import (
    ALREADY_PAIRED,
    KILLED,
    NOT_PAIRED,
    PRESENCE_REFUSED,
    PRESENCE_REQUIRED,
    SECOND_FACTOR_LOST,
)
from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.policy import Policy, apply_set, approves, normalise_origin, validate_value
from tabwarden.trust.record import Credential, TrustDocument, TrustUnreadable
from tabwarden.trust.record_file import (
    raise_floor,
    seal_first_record,
    seal_verdict,
    sealed_two_factor,
)
from tabwarden.trust.verify import Effective

if TYPE_CHECKING:
    from tabwarden.trust.audit import AuditLog
    from tabwarden.trust.gate import TrustGate
    from tabwarden.trust.keystore import KeyStore
    from tabwarden.trust.ratchet import Tamper

log = logging.getLogger("tabwarden.trust")

__all__ = [
    "PAIRING_CODE_TTL",
    "AlreadyPaired",
    "BrowserEnrolled",
    "GrantRefused",
    "Killed",
    "NotPaired",
    "Proof",
    "SecondFactorLost",
    "SecondFactorRequired",
    "TapRequired",
    "TerminalAndTap",
    "TerminalPhrase",
    "TrustContext",
    "VerifiedTap",
    "WindowClick",
    "OriginDecision",
    "approve_origin",
    "authenticators_enrolled",
    "enrolled_credentials",
    "decide_origin",
    "enrol_browser",
    "enrolled",
    "kill",
    "pair_client",
    "pair_host",
    "record_tap",
    "reissue_browser_code",
    "require_reissuable",
    "require_key",
    "require_paired",
    "require_readable",
    "require_unpaired",
    "release_kill",
    "restrict",
    "revoke",
    "rollback",
    "tampering",
    "two_factor_latched",
    "widen",
    "witness_epoch",
]

#: Seconds the one-time pairing code ``tabwarden pair`` prints stays valid.
PAIRING_CODE_TTL = 600


class NotPaired(TabwardenError):
    """tabwarden is not paired yet: there is no host key or no trust record."""

    code = NOT_PAIRED


class AlreadyPaired(TabwardenError):
    """tabwarden is already paired."""

    code = ALREADY_PAIRED
    hint = (
        "Lost one browser's authenticator? `tabwarden revoke browser LABEL`, then "
        "`tabwarden pair --browser LABEL` (no reset). `tabwarden pair --reset` rotates the host "
        "key; every client and browser must then pair again."
    )


class BrowserEnrolled(AlreadyPaired):
    """That browser is enrolled with an authenticator: a new one is added from the browser."""


#: What ``pair --browser`` says for a label that is enrolled (``BrowserEnrolled``).
ENROLLED_HINT = (
    "Lost its authenticator? `tabwarden revoke browser LABEL` first (free), then "
    "`tabwarden pair --browser LABEL` with a tap on another enrolled authenticator (if it was "
    "your only one: `tabwarden pair --reset`). To add another authenticator, approve it with the "
    "enrolled one from the options page."
)


class TapRequired(TabwardenError):
    """This browser is enrolled: a new origin needs a tap (``policy.widen``), not a click."""

    code = PRESENCE_REFUSED


#: What ``SecondFactorRequired`` tells the person to do.
SECOND_FACTOR_HINT = (
    "Run the command with the browser that holds your security key open: its tabwarden window "
    "asks for the tap. Or do it from that browser's tabwarden options page."
)


class SecondFactorRequired(TabwardenError):
    """An authenticator is enrolled: the phrase alone does not grant, a tap on it is needed too."""

    code = PRESENCE_REQUIRED


#: What ``SecondFactorLost`` tells the person to do.
SECOND_FACTOR_LOST_HINT = (
    "Every authenticator enrolled under this host key was revoked. Run `tabwarden pair --reset` "
    "(it drops every pairing and grant), then pair your browsers and clients again."
)


class SecondFactorLost(TabwardenError):
    """The record is latched (an authenticator was enrolled) and none is left: the phrase alone
    never grants again; ``pair --reset`` starts a new record."""

    code = SECOND_FACTOR_LOST
    exit_status = 1
    hint = SECOND_FACTOR_LOST_HINT


class GrantRefused(TabwardenError):
    """Nothing is paired, so there is no key to sign that grant with."""

    code = NOT_PAIRED


class Killed(TabwardenError):
    """The kill switch is engaged: nothing is granted until a person releases it."""

    code = KILLED


# --- proofs --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalPhrase:
    """A person typed the phrase for ``action`` at a real terminal."""

    action: str
    path: ClassVar[str] = "terminal"

    def audit_fields(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifiedTap:
    """A WebAuthn assertion the host verified, through browser ``browser``, from ``credential``
    (held by browser ``owner``); ``new_sign_count`` is stored before the action runs."""

    browser: str
    owner: str
    credential: Credential
    new_sign_count: int
    user_verified: bool
    path: ClassVar[str] = "webauthn"

    def audit_fields(self) -> dict[str, Any]:
        return {
            "browser": self.browser,
            "credential": self.credential.credential_id,
            "user_verified": self.user_verified,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowClick:
    """A click in the extension's confirm window of browser ``browser`` (software confirmation)."""

    browser: str
    path: ClassVar[str] = "window"

    def audit_fields(self) -> dict[str, Any]:
        return {"browser": self.browser}


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalAndTap:
    """Both factors for one action: ``phrase`` typed at a real terminal, then ``tap``, an
    assertion verified against a challenge naming exactly that action and its parameters.
    Audited under ``path`` ``webauthn`` with ``paths`` naming both."""

    phrase: TerminalPhrase
    tap: VerifiedTap
    path: ClassVar[str] = "webauthn"

    def audit_fields(self) -> dict[str, Any]:
        return {"paths": [TerminalPhrase.path, VerifiedTap.path], **self.tap.audit_fields()}


Proof = TerminalPhrase | VerifiedTap | WindowClick | TerminalAndTap


# --- where the record, the key and the audit log live --------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustContext:
    """Where one process finds the trust record, the host key and the audit log."""

    trust_path: Path
    kill_latch: Path
    load_key: Callable[[], HostKey | None]  # may raise KeyStoreUnavailable / KeyFileUnsafe
    effective: Callable[[], Effective]
    audit: Callable[[], AuditLog]

    @classmethod
    def for_gate(cls, gate: TrustGate, key_store: KeyStore | None = None) -> TrustContext:
        from tabwarden.trust.audit import AuditLog
        from tabwarden.trust.gate import host_key_store

        def load_key() -> HostKey | None:
            return (key_store or host_key_store(gate.config)).load()

        return cls(
            trust_path=gate.path,
            kill_latch=gate.kill_latch,
            load_key=load_key,
            effective=gate.current,
            audit=lambda: AuditLog.default(gate.env),  # beside the record it reads
        )


def require_key(ctx: TrustContext) -> HostKey:
    """The host key (``NotPaired`` when none is stored or the keyring is not usable)."""
    from tabwarden.trust.keystore import KeyStoreUnavailable

    try:
        key = ctx.load_key()
    except KeyStoreUnavailable:
        raise NotPaired("the host key is not available (the OS keyring is not usable)") from None
    if key is None:
        raise NotPaired("nothing is paired on this computer (`tabwarden pair`)")
    return key


def require_readable(ctx: TrustContext) -> Effective:
    """The effective record, refusing (``NotPaired`` / ``TrustUnreadable``) when there is none
    or it cannot be trusted."""
    if not ctx.trust_path.exists():
        raise NotPaired("nothing is paired on this computer (`tabwarden pair`)")
    eff = ctx.effective()
    if eff.refused:
        raise TrustUnreadable("the trust record is refused; see `tabwarden status`")
    return eff


def require_paired(ctx: TrustContext) -> tuple[HostKey, Effective]:
    """The host key and a record that verifies against it: what every grant needs."""
    if not ctx.trust_path.exists():
        raise NotPaired("nothing is paired on this computer (`tabwarden pair`)")
    key = require_key(ctx)
    return key, require_readable(ctx)


def _audit(ctx: TrustContext, event: str, decision: str, **fields: Any) -> None:
    """Record a change that has been made. The OS failing the write (a full disk) does not undo
    the change or turn it into an error; it is logged. An audit log that is not private still
    raises (``UnsafeAuditLog``): a person must look at it."""
    try:
        ctx.audit().append(event, decision=decision, **fields)
    except OSError as exc:
        log.error("%s was done but could not be audited (%s)", event, exc.strerror or exc)


def _proof_fields(proof: Proof) -> dict[str, Any]:
    return {"path": proof.path, **proof.audit_fields()}


def _by(browser: str | None) -> dict[str, Any]:
    return {} if browser is None else {"browser": browser}


def enrolled(eff: Effective, browser_label: str) -> bool:
    """Whether ``browser_label`` holds at least one enrolled credential in ``eff``."""
    return any(b.label == browser_label and b.credentials for b in eff.browsers)


def record_tap(ctx: TrustContext, key: HostKey, tap: VerifiedTap, now: int) -> None:
    """Store the tap's new sign count (a re-signed browser grant) — before the action it
    authorises, so a replay of the same assertion is refused even if the action fails."""
    stored = replace(tap.credential, sign_count=tap.new_sign_count)
    store.add_browser_credential(ctx.trust_path, key, tap.owner, stored, now, enrolled_only=True)


def enrolled_credentials(
    ctx: TrustContext, key: HostKey, now: int
) -> dict[str, tuple[Credential, ...]]:
    """Each browser's enrolled credentials in the record on disk, judged by its signatures alone
    (the ratchet aside, so a record being accepted after tampering is judged too); browsers
    without one are left out. ``TrustUnreadable`` when there is no record or it cannot be read."""
    from tabwarden.trust.record_file import load
    from tabwarden.trust.verify import effective

    doc = load(ctx.trust_path, expect_paired=True)
    if doc is None:
        raise TrustUnreadable("the trust record is missing")
    return {
        b.label: b.credentials for b in effective(doc, key.public, now).browsers if b.credentials
    }


def authenticators_enrolled(ctx: TrustContext, key: HostKey, now: int) -> bool:
    """Whether any browser holds an enrolled credential (``enrolled_credentials``)."""
    return bool(enrolled_credentials(ctx, key, now))


def two_factor_latched(ctx: TrustContext) -> bool:
    """Whether the record on disk says an authenticator was enrolled under this host key (its
    ``twoFactor`` latch; set on the first enrolment, dropped only by ``pair --reset``).
    ``TrustUnreadable`` when there is no record or it cannot be read."""
    from tabwarden.trust.record_file import load

    doc = load(ctx.trust_path, expect_paired=True)
    if doc is None:
        raise TrustUnreadable("the trust record is missing")
    return doc.two_factor is not None


def _check_factors(ctx: TrustContext, key: HostKey, proof: Proof, now: int, *, event: str) -> None:
    """The two-factor rule (module docstring): refuses, audited, before anything is written."""
    if not isinstance(proof, TerminalPhrase):
        return
    try:
        needs_tap = authenticators_enrolled(ctx, key, now)
        latched = two_factor_latched(ctx) or sealed_two_factor(ctx.trust_path)
    except Exception as exc:  # fail closed: a record we cannot judge grants nothing
        _audit(ctx, event, "refused", path=proof.path, reason="record unreadable")
        raise TrustUnreadable("the trust record cannot be read; nothing was changed") from exc
    if needs_tap:
        _audit(ctx, event, "refused", path=proof.path, reason="tap required")
        raise SecondFactorRequired(
            "an authenticator is enrolled: the phrase alone does not grant this, a tap on "
            "the security key is needed too; nothing was changed",
            hint=SECOND_FACTOR_HINT,
        )
    if latched:
        _audit(ctx, event, "refused", path=proof.path, reason="authenticator was enrolled")
        raise SecondFactorLost(
            "an authenticator was enrolled under this host key and none is left (revoked): the "
            "phrase alone never grants again; nothing was changed"
        )


def _spend_proof(ctx: TrustContext, key: HostKey, proof: Proof, now: int) -> None:
    """A tap's new sign count stored (before the action it authorises)."""
    if isinstance(proof, VerifiedTap):
        record_tap(ctx, key, proof, now)
    elif isinstance(proof, TerminalAndTap):
        record_tap(ctx, key, proof.tap, now)


def _take_proof(ctx: TrustContext, key: HostKey, proof: Proof, now: int, *, event: str) -> None:
    """Spend ``proof`` for a grant audited as ``event``: the two-factor rule, then a tap's new
    sign count stored. Refuses before anything is written."""
    _check_factors(ctx, key, proof, now, event=event)
    _spend_proof(ctx, key, proof, now)


# --- the host key --------------------------------------------------------------------------


def require_unpaired(ctx: TrustContext, key_store: KeyStore, *, reset: bool) -> None:
    """``AlreadyPaired`` unless nothing is paired yet or this is an explicit ``reset``."""
    if (key_store.load() is not None or ctx.trust_path.exists()) and not reset:
        raise AlreadyPaired()


def pair_host(
    ctx: TrustContext,
    proof: TerminalPhrase,
    key_store: KeyStore,
    *,
    reset: bool,
    code: str,
    now: int,
) -> HostKey:
    """Mint the host key, write the signed default policy and store ``code`` (hashed) as the
    one-time pairing code. A reset drops every grant but never releases the kill switch; it also
    replaces a record the ratchet refuses (rolled back, edited, vanished), carrying on above the
    seal's epoch and kill serial. Without ``reset``, a ratchet seal left behind is refused
    (``TrustTampered``) before anything is minted. The phrase alone is the proof even while an
    authenticator is enrolled: a reset narrows (module docstring)."""
    require_unpaired(ctx, key_store, reset=reset)
    if not reset:
        tamper = tampering(ctx)  # a seal left without record or key: nothing minted or stored
        if tamper is not None:
            from tabwarden.trust.ratchet import TrustTampered

            raise TrustTampered(tamper)
    killed_before = reset and ctx.effective().killed
    key = HostKey.generate()
    seal_first_record(ctx.trust_path, key_store, reset=reset)  # before the key: never key alone
    key_store.save(key, replace=reset)
    store.initialise(ctx.trust_path, key, key_store.kind, now, replace_existing=reset)
    if killed_before:
        store.engage_kill(ctx.trust_path, "kept across pair --reset", now)
    digest = hashlib.sha256(code.encode("utf-8")).hexdigest()
    store.set_pairing_code(ctx.trust_path, digest, now + PAIRING_CODE_TTL)
    _audit(
        ctx, "pair", "granted", **_proof_fields(proof), reset=reset, store=key_store.kind,
        fingerprint=key.public.fingerprint,
    )  # fmt: skip
    return key


# --- the kill switch -----------------------------------------------------------------------


def _write_latch(latch: Path, reason: str, now: int) -> None:
    """The latch file is the kill record that always works (``trust/gate.py``): before anything
    is paired, and whenever the record cannot be written (tampered, unreadable, seal out of
    reach)."""
    from tabwarden.trust.gate import write_kill_latch

    try:
        write_kill_latch(latch, {"at": now, "reason": reason})
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFull(f"{latch} cannot be created ({exc.strerror})") from None
        raise


def kill(ctx: TrustContext, reason: str, now: int, *, browser: str | None = None) -> int:
    """Engage the kill switch (free). Returns the record's new epoch (0 for the latch).

    A record the writers refuse (tampered, unreadable, its seal's key store out of reach) is
    never rewritten — that would launder it under a new epoch — so the latch is written."""
    from tabwarden.trust.keystore import KeyStoreError

    epoch = 0
    if ctx.trust_path.exists():
        try:
            epoch = store.engage_kill(ctx.trust_path, reason, now).epoch
        except (TrustUnreadable, KeyStoreError, StorageFull) as exc:
            _write_latch(ctx.kill_latch, reason, now)
            _audit(ctx, "kill", "narrowed", reason=reason, latched=str(exc), **_by(browser))
            return 0
    else:
        _write_latch(ctx.kill_latch, reason, now)
    _audit(ctx, "kill", "narrowed", reason=reason, **_by(browser))
    return epoch


def killed(ctx: TrustContext) -> bool:
    """Whether the kill switch is engaged (``NotPaired`` when there is neither key nor latch)."""
    if not os.path.lexists(ctx.kill_latch) and ctx.load_key() is None:
        raise NotPaired()
    return ctx.effective().killed


def tampering(ctx: TrustContext) -> Tamper | None:
    """What the ratchet finds wrong with the record right now, as a writer sees it (None: the
    record is the one its seal vouches for, or nothing is paired). Never writes."""
    from tabwarden.trust.ratchet import Tamper

    tamper = seal_verdict(ctx.trust_path)
    if tamper is None and not ctx.trust_path.exists() and ctx.load_key() is not None:
        return Tamper.vanished("it is missing but the key store holds a host key")
    return tamper


def release_kill(ctx: TrustContext, proof: Proof, now: int) -> int:
    """Release the kill switch (``unkill``): a release signed at the current kill level, and
    the latch removed. Returns the new epoch (0 when only the latch was held).

    A record the ratchet refuses (rolled back, edited, unsealed) is accepted as it is now — the
    person has been shown what happened — rewritten above every epoch and kill serial sealed
    (``store.accept_record``). A vanished record cannot be accepted: ``TrustTampered`` (its hint
    is ``pair --reset``), nothing written."""
    from tabwarden.trust.ratchet import TrustTampered

    epoch = 0
    tamper = tampering(ctx)
    if tamper is not None and tamper.kind == "vanished":
        raise TrustTampered(tamper)
    if tamper is not None:
        key = require_key(ctx)
        _check_factors(ctx, key, proof, now, event="unkill")
        epoch = store.accept_record(ctx.trust_path, key, now).epoch
        _spend_proof(ctx, key, proof, now)  # the counter lands in the accepted record
        _audit(
            ctx, "trust_accepted", "granted", **_proof_fields(proof), kind=tamper.kind,
            reason=tamper.reason, epoch=epoch,
        )  # fmt: skip
    elif ctx.trust_path.exists():
        key, _ = require_paired(ctx)
        _take_proof(ctx, key, proof, now, event="unkill")
        epoch = store.release_kill(ctx.trust_path, key, now).epoch
    elif not os.path.lexists(ctx.kill_latch):
        raise NotPaired()
    if os.path.lexists(ctx.kill_latch):
        os.unlink(ctx.kill_latch)
    _audit(ctx, "unkill", "granted", **_proof_fields(proof))
    return epoch


def witness_epoch(ctx: TrustContext, epoch: int, now: int, *, source: str) -> bool:
    """A trusted party (``source``: the extension, over the pinned native-messaging channel)
    has seen trust record ``epoch``. Later than the record on disk means the record was rolled
    back (record and seal put back together): the seal's highest epoch is raised to ``epoch``,
    the kill switch latched and audited, and True returned. Free: it can only narrow."""
    from tabwarden.trust.gate import write_kill_latch
    from tabwarden.trust.keystore import KeyStoreError
    from tabwarden.trust.ratchet import Tamper

    if type(epoch) is not int or not 0 <= epoch <= 2**53 - 1:
        raise UsageError("a witnessed epoch is a non-negative integer")
    try:
        on_disk = raise_floor(ctx.trust_path, epoch)
    except (TrustUnreadable, KeyStoreError):
        return False  # the readers deny an unreadable record already; nothing to compare with
    if on_disk is not None and epoch <= on_disk:
        return False
    tamper = (
        Tamper.vanished(f"{source} saw epoch {epoch}, and there is no record", epoch)
        if on_disk is None
        else Tamper.rolled_back(on_disk, epoch)
    )
    write_kill_latch(
        ctx.kill_latch, {"at": now, "reason": "trust record tampered", "tamper": tamper.to_json()}
    )
    _audit(
        ctx, "trust_tampered", "narrowed", kind=tamper.kind, reason=tamper.reason,
        epoch=on_disk, highest=epoch, source=source,
    )  # fmt: skip
    return True


# --- the policy ----------------------------------------------------------------------------


def restrict(
    ctx: TrustContext, changes: Mapping[str, object], now: int, *, browser: str | None = None
) -> int:
    """Narrow each key of ``changes`` (free), all or nothing; a value that would widen is
    refused (``PolicyError``) by the writer, inside the lock. Returns the new epoch."""
    normalised = {key: validate_value(key, value) for key, value in changes.items()}
    require_readable(ctx)
    doc = store.add_restrictions(ctx.trust_path, normalised, now)
    _audit(ctx, "policy_restrict", "narrowed", changed=sorted(normalised), **_by(browser))
    return doc.epoch


def preview_widen(ctx: TrustContext, changes: Mapping[str, object]) -> Policy:
    """The policy ``widen(changes)`` would sign now (``PolicyError`` for an invalid change)."""
    return apply_set(require_readable(ctx).policy, dict(changes))


def widen(ctx: TrustContext, proof: Proof, changes: Mapping[str, object], now: int) -> int:
    """Sign a new baseline with ``changes`` applied (``policy set``, or a tap's
    ``policy.widen``). Restrictions on the keys set are dropped. Returns the new epoch."""
    key, eff = require_paired(ctx)
    new = apply_set(eff.policy, dict(changes))  # PolicyError before the proof is spent
    _take_proof(ctx, key, proof, now, event="policy_set")
    doc = store.set_baseline(ctx.trust_path, key, new.to_json(), now, set_keys=changes)
    _audit(ctx, "policy_set", "granted", **_proof_fields(proof), changed=sorted(changes))
    return doc.epoch


def rollback(ctx: TrustContext, steps: int, now: int, proof: Proof | None = None) -> int:
    """Return to the baseline ``steps`` back. Without a proof only a narrowing rollback is
    written (``PresenceRequired`` otherwise, nothing written); with one it is re-signed."""
    if proof is None:
        doc = store.rollback(ctx.trust_path, None, steps, now)
        _audit(ctx, "policy_rollback", "narrowed", steps=steps)
        return doc.epoch
    key, _ = require_paired(ctx)
    _take_proof(ctx, key, proof, now, event="policy_rollback")
    doc = store.rollback(ctx.trust_path, key, steps, now)
    _audit(ctx, "policy_rollback", "granted", **_proof_fields(proof), steps=steps)
    return doc.epoch


@dataclass(frozen=True, slots=True, kw_only=True)
class OriginDecision:
    """What it takes to approve ``origin`` for browser ``browser`` right now.

    ``ask`` is ``"none"`` (the signed policy approves it already), ``"tap"`` (an enrolled
    browser: a ``policy.widen`` tap over exactly ``detail``) or ``"click"`` (the confirm window,
    then ``approve_origin`` with a ``WindowClick``)."""

    origin: str
    ask: Literal["none", "tap", "click"]
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"origin": self.origin, "ask": self.ask}
        if self.detail is not None:
            out["action"] = "policy.widen"
            out["detail"] = self.detail
        return out


def decide_origin(ctx: TrustContext, browser: str, origin: str) -> OriginDecision:
    """The one origin decision: refuse when nothing may be approved (unpaired, unreadable,
    killed), else say whether it is approved already, needs a tap or a click. Writes nothing."""
    from tabwarden.trust.canonical import canonical

    exact = normalise_origin(origin)
    eff = require_readable(ctx)
    if eff.killed:
        raise Killed("the kill switch is engaged: no site can be approved")
    approved = list(eff.policy.origins)
    if approves(approved, exact):
        return OriginDecision(origin=exact, ask="none")
    if enrolled(eff, browser):
        detail = canonical({"origins": [*approved, exact]}).decode("utf-8")
        return OriginDecision(origin=exact, ask="tap", detail=detail)
    return OriginDecision(origin=exact, ask="click")


def approve_origin(ctx: TrustContext, proof: Proof, origin: str, now: int) -> int:
    """Add exact ``origin`` to the signed policy. A window click is refused (``TapRequired``)
    for a browser enrolled with a credential: it approves with a tap. Returns the epoch."""
    exact = normalise_origin(origin)  # PolicyError for anything but an exact origin
    if not ctx.trust_path.exists() or ctx.load_key() is None:
        raise GrantRefused("nothing is paired, so an approval cannot be recorded")
    key = require_key(ctx)
    eff = require_readable(ctx)
    if eff.killed:
        raise Killed("the kill switch is engaged: no site can be approved")
    if isinstance(proof, WindowClick) and enrolled(eff, proof.browser):
        raise TapRequired("this browser is enrolled: approve with a tap")
    _take_proof(ctx, key, proof, now, event="origin_grant")
    epoch = eff.epoch
    if not approves(eff.policy.origins, exact):
        widened = apply_set(eff.policy, {"origins": [*eff.policy.origins, exact]})
        doc = store.set_baseline(ctx.trust_path, key, widened.to_json(), now, set_keys=("origins",))
        epoch = doc.epoch
    _audit(ctx, "origin_grant", "granted", **_proof_fields(proof), origin=exact)
    return epoch


# --- MCP clients ---------------------------------------------------------------------------


def pair_client(
    ctx: TrustContext, proof: Proof, *, label: str, exe: str, sha256: str, now: int
) -> int:
    """Pin the MCP client ``exe`` (by ``sha256``) as ``label``. Returns the new epoch."""
    key, _ = require_paired(ctx)
    _take_proof(ctx, key, proof, now, event="pair_client")
    doc = store.add_client(ctx.trust_path, key, label, exe, sha256, now, via=proof.path)
    _audit(
        ctx, "pair_client", "granted", **_proof_fields(proof), label=label, exe=exe,
        sha256=sha256,
    )  # fmt: skip
    return doc.epoch


def revoke(
    ctx: TrustContext, kind: str, label: str, now: int, *, browser: str | None = None
) -> int:
    """Forget client or browser ``label`` (free); a re-inserted copy of its grant stays
    revoked. Live connections are cut by the readers as the epoch moves."""
    doc = store.revoke(ctx.trust_path, kind, label, now)
    _audit(ctx, "revoke", "narrowed", kind=kind, label=label, **_by(browser))
    return doc.epoch


# --- browsers ------------------------------------------------------------------------------


def enrol_browser(
    ctx: TrustContext,
    browser: str,
    credential: Credential | None,
    now: int,
    *,
    approval: VerifiedTap | None = None,
    terminal_approved: bool = False,
) -> TrustDocument:
    """Pair ``browser`` after a registration the host verified against a challenge issued for a
    valid one-time code (``credential``), or window-only (``None``: no authenticator, never for
    a browser already enrolled). ``approval`` is an enrolled credential's tap, required by the
    caller whenever any browser is enrolled — unless ``terminal_approved``: the code was issued
    for this very browser by ``reissue_browser_code`` (a phrase typed at the terminal). An
    approval's sign count is stored first."""
    key, _ = require_paired(ctx)
    approved_by = "terminal" if terminal_approved else None
    if approval is not None:
        record_tap(ctx, key, approval, now)
        approved_by = approval.credential.credential_id
    if credential is None:
        doc = store.add_window_only_browser(ctx.trust_path, key, browser, now)
        _audit(
            ctx, "browser_pair", "granted", path="window", browser=browser,
            approved_by=approved_by,
        )  # fmt: skip
        return doc
    doc = store.add_browser_credential(ctx.trust_path, key, browser, credential, now)
    _audit(
        ctx, "browser_pair", "granted", path="webauthn", browser=browser,
        credential=credential.credential_id, approved_by=approved_by,
        user_verified=credential.uv,
    )  # fmt: skip
    return doc


def require_reissuable(ctx: TrustContext, label: str) -> Effective:
    """Refuse (before any ceremony) unless browser ``label`` may be given a fresh one-time
    code: a host key and a readable record (``NotPaired`` / ``TrustUnreadable``), the kill switch
    released (``Killed``), a valid label (``BadLabel``) and no credential enrolled for it
    (``BrowserEnrolled``). A label revoked, window-only or never paired qualifies."""
    from tabwarden.paths import LABEL_RE, BadLabel

    if not isinstance(label, str) or not LABEL_RE.match(label):
        raise BadLabel(f"invalid browser label {label!r} (1-32 of a-z, 0-9, '-', '_')")
    _, eff = require_paired(ctx)
    if eff.killed:
        raise Killed("the kill switch is engaged: release it (`tabwarden unkill`) first")
    if enrolled(eff, label):
        raise BrowserEnrolled(
            f"browser {label!r} is enrolled with an authenticator", hint=ENROLLED_HINT
        )
    return eff


def reissue_browser_code(
    ctx: TrustContext, proof: TerminalPhrase | TerminalAndTap, label: str, code: str, now: int
) -> int:
    """Store ``code`` (hashed, ``PAIRING_CODE_TTL``) as a one-time code only browser ``label``
    can redeem (``pair --browser LABEL``; the binding is signed with the host key, so the file
    alone can never make one): the recovery after ``revoke browser LABEL`` that rotates no key.
    The person's phrase stands in for an enrolled credential's approval: while ``label`` holds
    no credential, ``pair_begin`` with this code asks for none — and while another browser holds
    one, the phrase alone is refused (the two-factor rule). Paired clients and other
    browsers are untouched; any pending code is replaced. Returns the new epoch."""
    require_reissuable(ctx, label)
    key = require_key(ctx)
    _take_proof(ctx, key, proof, now, event="browser_code")
    digest = hashlib.sha256(code.encode("utf-8")).hexdigest()
    doc = store.set_pairing_code(ctx.trust_path, digest, now + PAIRING_CODE_TTL, bind=(key, label))
    fields = _proof_fields(proof)
    if "browser" in fields:  # the browser tapped in is not the browser the code is for
        fields["tapped_in"] = fields.pop("browser")
    _audit(ctx, "browser_code", "granted", **fields, browser=label)
    return doc.epoch
