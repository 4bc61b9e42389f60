"""The epoch ratchet: a seal kept beside the host key that says which ``trust.json`` is current.

Theory of operation. ``trust.json`` is a user-writable file, and its ``epoch`` field is not signed
(only grants are, each with the epoch it was signed at). A same-user program could put back an
older record after restarting every reader, raise an old record's epoch to look new, lower the
kill serial or drop a revocation. The *seal* closes that: a small document kept in the key store
that holds the host key (the OS keyring, entry ``trust-ratchet``; with ``--file-store`` the private
file ``trust-ratchet.json`` beside ``host-key.pem``), naming the record that is current by its
epoch and the SHA-256 of its exact bytes, with the highest epoch and kill serial ever sealed or
witnessed. Any byte of the record that differs from the seal is tampering, whatever the epoch
field says:

* record epoch below the highest epoch → **rolled back** ("trust record rolled back (epoch N,
  highest seen M)");
* same epoch but other bytes, or a higher epoch than sealed → **edited** outside tabwarden;
* no record, while the key store holds a seal or a host key → **vanished**. ``pair`` seals
  "the first record is being written" (``pending`` = ``NO_RECORD``) *before* it stores the key,
  so a reader looking between the key and the first record sees that seal: denied, not latched.
  A key with neither record nor seal is therefore never a step of pairing;
* a paired record with no seal → **unsealed** (written before sealing existed, or the seal was
  deleted). Fail closed: adopting an unsealed record silently would make "delete the seal, then
  restore the old record" a rollback, so only the person adopts it (``tabwarden unkill``).

Every reader (``TrustReader``) denies everything on any of these and the gate latches the kill
switch (``kill-latch``), so putting the right file back does not un-deny silently.

Writing (``record_file.update``, inside the record's lock) — the crash-safe order:

1. check the record on disk against the seal (tampered → refuse, unless the person accepts it);
2. seal ``{new, pending: current}``: both the record being replaced and its successor are valid;
3. write the record (temp, fsync, rename, fsync the directory);
4. seal ``{new}``.

A crash after 2 leaves the old record in place and still valid (nothing lost); a crash after 3
leaves the new record valid. Between 2 and 4 the previous record is also accepted — a rollback of
at most one step, open only while a write is in flight or after a writer died there, and closed by
the next write. A record accepted as ``pending`` is held to the seal's kill serial (still killed
if the lost write was a kill).

This module's core (``Seal``, ``judge``, ``Tamper``) is pure; ``SealKeeper`` is the small I/O
shell over the key stores. Nothing here may put key material, or anything but epochs, digests
and serials, into a seal, a reason or an exception; and nothing here may turn a failure into
"no seal" for a record that exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tabwarden.trust.record import TrustDocument, TrustUnreadable

if TYPE_CHECKING:
    from tabwarden.trust.keystore import KeyStore

__all__ = [
    "MAX_SEAL_BYTES",
    "NO_RECORD",
    "SEAL_FILE_NAME",
    "Seal",
    "SealKeeper",
    "SealedRecord",
    "Tamper",
    "TamperKind",
    "TrustTampered",
    "digest",
    "first_write",
    "judge",
    "kill_level",
    "parse_seal",
]

SEAL_VERSION = 1
#: The seal is a few dozen bytes; anything much larger is not ours.
MAX_SEAL_BYTES = 4096
#: The file store's seal, beside ``host-key.pem``.
SEAL_FILE_NAME = "trust-ratchet.json"
#: The OS keyring's seal: service ``tabwarden``, this user name (the key is ``host-key``).
SEAL_KEYRING_USER = "trust-ratchet"

_MAX_INT = 2**53 - 1
_HEX64 = re.compile(r"^[0-9a-f]{64}$")

TamperKind = Literal["rolled_back", "edited", "vanished", "unsealed"]
_KINDS: tuple[TamperKind, ...] = ("rolled_back", "edited", "vanished", "unsealed")


def digest(raw: bytes) -> str:
    """SHA-256 (hex) of a record's exact bytes."""
    return hashlib.sha256(raw).hexdigest()


def kill_level(doc: TrustDocument) -> int:
    """The highest kill serial anywhere in ``doc`` (valid or not): its kill level at most."""
    floors: list[int] = [doc.kill.serial, *(e.serial for e in doc.kill.events)]
    floors += [c.kill_serial for c in doc.clients] + [b.kill_serial for b in doc.browsers]
    floors += [r.kill_serial for r in doc.releases] + [h.kill_serial for h in doc.policy.history]
    floors += [r.serial for r in doc.releases]
    if doc.policy.baseline is not None:
        floors.append(doc.policy.baseline.kill_serial)
    return max(floors)


# --- the seal --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SealedRecord:
    """One record, by its epoch and the SHA-256 of its exact bytes."""

    epoch: int
    sha256: str

    def __post_init__(self) -> None:
        if type(self.epoch) is not int or not 0 <= self.epoch <= _MAX_INT:
            raise ValueError("a sealed epoch is an integer 0..2^53-1")
        if not isinstance(self.sha256, str) or not _HEX64.match(self.sha256):
            raise ValueError("a sealed digest is 64 lower-case hex digits")

    def matches(self, raw: bytes, epoch: int) -> bool:
        return self.epoch == epoch and self.sha256 == digest(raw)

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "sha256": self.sha256}


#: ``pending`` while the very first record (or one replacing a vanished record) is written:
#: "no record" is the state being replaced. No real record is empty bytes at epoch 0.
NO_RECORD = SealedRecord(epoch=0, sha256=hashlib.sha256(b"").hexdigest())


@dataclass(frozen=True, slots=True, kw_only=True)
class Seal:
    """The current record, the highest epoch and kill serial vouched for, and (while a write is
    in flight) the record being replaced."""

    record: SealedRecord
    highest_epoch: int
    kill_serial: int
    pending: SealedRecord | None = None
    #: The sealed record is latched (``twoFactor``): a record accepted after tampering is held
    #: to it, so deleting the latch from the file and then accepting the file does not unlatch.
    two_factor: bool = False

    def __post_init__(self) -> None:
        for name in ("highest_epoch", "kill_serial"):
            value = getattr(self, name)
            if type(value) is not int or not 0 <= value <= _MAX_INT:
                raise ValueError(f"{name} is an integer 0..2^53-1")
        if self.highest_epoch < self.record.epoch:
            raise ValueError("the highest epoch is never below the sealed record's")

    def to_bytes(self) -> bytes:
        doc: dict[str, Any] = {
            "version": SEAL_VERSION,
            "record": self.record.to_json(),
            "highestEpoch": self.highest_epoch,
            "killSerial": self.kill_serial,
            "pending": None if self.pending is None else self.pending.to_json(),
        }
        if self.two_factor:  # written only when set: seals from before it read unchanged
            doc["twoFactor"] = True
        return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("ascii")

    def settled(self) -> Seal:
        """This seal once its write has landed (no record pending)."""
        return replace(self, pending=None)


class SealUnreadable(TrustUnreadable):
    """The ratchet seal beside the host key cannot be read."""


def _record(value: Any) -> SealedRecord:
    if not isinstance(value, dict) or set(value) != {"epoch", "sha256"}:
        raise ValueError("a sealed record has exactly epoch and sha256")
    return SealedRecord(epoch=value["epoch"], sha256=value["sha256"])


def parse_seal(raw: bytes) -> Seal:
    """The seal in ``raw``; ``SealUnreadable`` (a denial) for anything else."""
    try:
        if len(raw) > MAX_SEAL_BYTES:
            raise ValueError("too large")
        doc = json.loads(raw.decode("ascii"))
        if not isinstance(doc, dict) or set(doc) - {"twoFactor"} != {
            "version",
            "record",
            "highestEpoch",
            "killSerial",
            "pending",
        }:
            raise ValueError("unexpected fields")
        if "twoFactor" in doc and doc["twoFactor"] is not True:
            raise ValueError("twoFactor is true or absent")
        if doc["version"] != SEAL_VERSION or type(doc["version"]) is not int:
            raise ValueError("unknown version")
        pending = None if doc["pending"] is None else _record(doc["pending"])
        return Seal(
            record=_record(doc["record"]),
            highest_epoch=doc["highestEpoch"],
            kill_serial=doc["killSerial"],
            pending=pending,
            two_factor="twoFactor" in doc,
        )
    except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
        reason = type(exc).__name__
    raise SealUnreadable(f"the trust record's ratchet seal is unreadable ({reason}): tampering")


# --- the verdict -----------------------------------------------------------------------------


_NEXT_STEP: dict[str, str] = {
    "rolled_back": (
        "Run `tabwarden unkill` at a terminal: it shows what was rolled back and lets you accept "
        "the record as it is now (or put the newer record back first)."
    ),
    "edited": (
        "Run `tabwarden unkill` at a terminal: it shows what changed and lets you accept the "
        "record as it is now (signatures still decide every grant)."
    ),
    "unsealed": (
        "Run `tabwarden unkill` at a terminal to accept this record and seal it (records from "
        "before the ratchet, or a deleted seal)."
    ),
    "vanished": (
        "Run `tabwarden pair --reset` at a terminal (a new host key; clients and browsers pair "
        "again), then `tabwarden unkill`."
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Tamper:
    """What the ratchet found wrong with the record. ``epoch`` is the record's on disk (None when
    it is missing); ``highest`` the highest epoch the seal (or this process) vouches for."""

    kind: TamperKind
    reason: str
    epoch: int | None = None
    highest: int | None = None

    @property
    def next_step(self) -> str:
        return _NEXT_STEP[self.kind]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "reason": self.reason,
            "epoch": self.epoch,
            "highest": self.highest,
        }

    @classmethod
    def from_json(cls, value: Any) -> Tamper | None:
        """A note read back from the kill latch; None for anything that is not one."""
        if not isinstance(value, dict) or value.get("kind") not in _KINDS:
            return None
        reason = value.get("reason")
        epoch, highest = value.get("epoch"), value.get("highest")
        if not isinstance(reason, str) or not reason.isprintable() or len(reason) > 512:
            return None
        if not all(v is None or type(v) is int for v in (epoch, highest)):
            return None
        return cls(kind=value["kind"], reason=reason, epoch=epoch, highest=highest)

    @classmethod
    def rolled_back(cls, epoch: int, highest: int) -> Tamper:
        return cls(
            kind="rolled_back",
            reason=f"trust record rolled back (epoch {epoch}, highest seen {highest})",
            epoch=epoch,
            highest=highest,
        )

    @classmethod
    def edited(cls, epoch: int, sealed: int, detail: str = "") -> Tamper:
        return cls(
            kind="edited",
            reason=f"trust record edited outside tabwarden (epoch {epoch}, sealed epoch {sealed}"
            + (f"; {detail}" if detail else "")
            + ")",
            epoch=epoch,
            highest=sealed,
        )

    @classmethod
    def vanished(cls, what: str, highest: int | None = None) -> Tamper:
        return cls(kind="vanished", reason=f"trust record vanished: {what}", highest=highest)


class TrustTampered(TrustUnreadable):
    """The trust record is not the one tabwarden last wrote (rolled back, edited, vanished, or
    without a seal): everything is denied and the kill switch is latched."""

    def __init__(self, tamper: Tamper) -> None:
        super().__init__(tamper.reason)
        self.tamper = tamper
        self.hint = tamper.next_step


def judge(
    raw: bytes | None, epoch: int | None, seal: Seal | None, *, paired: bool
) -> Tamper | None:
    """Whether the record ``raw`` (at ``epoch``; None when missing) is the one ``seal`` vouches
    for. ``paired``: the key store holds a host key. Pure."""
    if raw is None or epoch is None:
        if seal is not None and seal.pending != NO_RECORD:
            return Tamper.vanished(
                "it is missing but the key store holds its ratchet seal", seal.highest_epoch
            )
        if seal is None and paired:  # `pair` seals before it stores the key (``first_write``)
            return Tamper.vanished("it and its ratchet seal are missing but the host key is stored")
        # The first record is being written (or nothing is paired): the caller still denies
        # everything when ``paired``.
        return None
    if seal is None:
        return Tamper(
            kind="unsealed",
            reason="the trust record has no ratchet seal beside the host key (written before "
            "tabwarden sealed records, or the seal was deleted): tampering",
            epoch=epoch,
        )
    if seal.record.matches(raw, epoch):
        if epoch < seal.highest_epoch:  # record and seal put back together; a witness saw more
            return Tamper.rolled_back(epoch, seal.highest_epoch)
        return None
    if seal.pending is not None and seal.pending.matches(raw, epoch):
        return None  # a write was in flight: the record it replaces is still valid
    if epoch < seal.highest_epoch:
        return Tamper.rolled_back(epoch, seal.highest_epoch)
    if epoch == seal.record.epoch:
        return Tamper.edited(epoch, seal.record.epoch, "other bytes than sealed")
    return Tamper.edited(epoch, seal.record.epoch, "a later epoch than sealed")


def first_write(previous: Seal | None) -> Seal:
    """The seal ``pair`` writes before it stores a host key for a missing record: "the first
    record is being written", carrying on above any seal left behind (``pair --reset`` after a
    vanished record)."""
    return Seal(
        record=NO_RECORD,
        highest_epoch=0 if previous is None else previous.highest_epoch,
        kill_serial=0 if previous is None else previous.kill_serial,
        pending=NO_RECORD,
    )


def pending_floor(raw: bytes, epoch: int, seal: Seal | None) -> int:
    """The kill serial a record accepted by ``judge`` is held to: the seal's when it is the
    record a write was replacing (that write may have been a kill), else 0."""
    if seal is None or seal.record.matches(raw, epoch):
        return 0
    return seal.kill_serial


def next_seal(
    previous: Seal | None, new_raw: bytes, new: TrustDocument, *, replacing: SealedRecord | None
) -> Seal:
    """The seal to write before ``new`` lands (``replacing`` pending); ``settled()`` after."""
    highest = max(new.epoch, previous.highest_epoch if previous is not None else 0)
    return Seal(
        record=SealedRecord(epoch=new.epoch, sha256=digest(new_raw)),
        highest_epoch=highest,
        kill_serial=kill_level(new),
        pending=replacing,
        two_factor=new.two_factor is not None,
    )


# --- where the seal lives (I/O) ---------------------------------------------------------------


class SealKeeper:
    """The seal for the record in ``config``: kept in the key store that holds the host key.

    Which store: ``host-key.pem`` exists → the file store; else the OS keyring when it holds the
    key the record names; else the file store, unless the record names the keyring (then
    ``KeyStoreUnavailable``: its seal cannot be reached, so nothing is written or accepted).
    The record's own ``hostKey.store`` never moves the seal away from where the key is.
    """

    def __init__(self, config: Path | str) -> None:
        self.config = Path(config)

    def _file(self) -> KeyStore:
        from tabwarden.trust.keystore import KEY_FILE_NAME, FileStore

        return FileStore(self.config / KEY_FILE_NAME)

    def store_for(self, doc: TrustDocument) -> KeyStore:
        from tabwarden.trust.keystore import (
            KEY_FILE_NAME,
            KeyringStore,
            KeyStoreUnavailable,
        )

        if os.path.lexists(self.config / KEY_FILE_NAME):
            return self._file()
        keyring = KeyringStore()
        try:
            held = keyring.load()
        except KeyStoreUnavailable:
            if doc.host_key.store == "keyring":
                raise
            held = None
        if held is not None and held.public.b64 == doc.host_key.public:
            return keyring
        if doc.host_key.store == "keyring":
            raise KeyStoreUnavailable(
                "the OS keyring does not hold the host key this trust record names, so its "
                "ratchet seal cannot be checked"
            )
        return self._file()

    def load(self, doc: TrustDocument) -> Seal | None:
        raw = self.store_for(doc).load_seal()
        return None if raw is None else parse_seal(raw)

    def save(self, doc: TrustDocument, seal: Seal) -> None:
        self.store_for(doc).save_seal(seal.to_bytes())

    def any_seal(self) -> Seal | None:
        """A seal in either store (for a record that is missing): the file's, else the
        keyring's when it is usable."""
        from tabwarden.trust.keystore import KeyringStore, KeyStoreUnavailable

        raw = self._file().load_seal()
        if raw is None:
            try:
                raw = KeyringStore().load_seal()
            except KeyStoreUnavailable:
                raw = None
        return None if raw is None else parse_seal(raw)

    def probe(self) -> tuple[int, ...]:
        """Changes whenever the file store's seal changes (the keyring's is re-read whenever the
        record changes)."""
        try:
            st = os.stat(self.config / SEAL_FILE_NAME, follow_symlinks=False)
        except FileNotFoundError:
            return ()
        except OSError:
            return (-1,)
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
